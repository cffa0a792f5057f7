import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { buildWebApp, launchChromium } from './web-app.ts';

/*
 * Single sign-on end to end (docs/sso.md): the web app in Chromium, the gateway, and a real
 * Keycloak with the realm of infra/keycloak/realm.json (bash infra/keycloak.sh start prints its
 * issuer). infra/test.sh runs this file in a pass of its own with KEYCLOAK_ISSUER set; without it
 * the file's tests are skipped.
 */

const ISSUER = process.env.KEYCLOAK_ISSUER;
const CLIENT = { id: 'knowledge-network', secret: 'kn-test-client-secret' };
const ADA = { username: 'ada', password: 'ada-password-for-tests', email: 'ada.lovelace@example.com' };
const BOB = { username: 'bob', password: 'bob-password-for-tests', email: 'bob.unverified@example.com' };

let system: System;
let browser: Browser;
let webRoot: string;
const contexts: BrowserContext[] = [];

(ISSUER ? describe : describe.skip)('single sign-on through Keycloak (KEYCLOAK_ISSUER)', () => {
  beforeAll(async () => {
    webRoot = buildWebApp('kn-web-sso-');
    system = await startSystem({
      WEB_ROOT: webRoot,
      OIDC_ISSUER: ISSUER!,
      OIDC_CLIENT_ID: CLIENT.id,
      OIDC_CLIENT_SECRET: CLIENT.secret,
      OIDC_NAME: 'Example Corp',
      // The audience Keycloak's audience mapper puts in the mcp-assistant client's access tokens (docs/mcp.md).
      OIDC_MCP_AUDIENCE: 'knowledge-network-mcp',
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await system?.stop();
    if (webRoot) rmSync(webRoot, { recursive: true, force: true });
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ baseURL: system.url, viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (err) => {
      throw err;
    });
    return page;
  }

  /** From the web app's sign-in page through Keycloak's own login page; the milliseconds from the click on. */
  async function signInWithKeycloak(page: Page, who: { username: string; password: string }, next = '/') {
    await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
    const button = page.getByRole('link', { name: 'Sign in with Example Corp' });
    await button.waitFor();
    const clicked = performance.now();
    await button.click();
    await page.locator('#username').waitFor();
    expect(new URL(page.url()).origin).toBe(new URL(ISSUER!).origin);
    await page.locator('#username').fill(who.username);
    await page.locator('#password').fill(who.password);
    const submitted = performance.now();
    await page.locator('#kc-login').click();
    return { clicked, submitted };
  }

  const usersWithEmail = async (email: string) => {
    const res = await system.api.get(`${API}/users?query=${encodeURIComponent(email)}`).set(...bearer(system.adminToken));
    return (res.body.items as Array<{ id: number; email: string }>).filter((u) => u.email === email);
  };

  test('a person clicks "Sign in with …", signs in on Keycloak and lands in the web app as themself; then signs out', async () => {
    // Ada is in Keycloak's group engineering (the realm's groups claim).
    const mapped = await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings: [{ group: 'Engineering', roles: ['content_admin'] }] });
    expect(mapped.status).toBe(200);
    const page = await newPage();
    const { clicked, submitted } = await signInWithKeycloak(page, ADA, '/experts');
    await page.locator('header nav').waitFor();
    const landed = performance.now();
    expect(new URL(page.url()).pathname).toBe('/experts');
    // The round trip of the issue's measure: from the click to the signed-in page.
    console.log(
      `single sign-on through Keycloak: ${Math.round(landed - clicked)} ms from the click to the signed-in page ` +
        `(${Math.round(landed - submitted)} ms of it after the password was sent; test/oidc-keycloak.test.ts)`,
    );
    const person = await page.evaluate(async () => (await fetch('/api/v1/users/me')).json() as Promise<{ id: number; roles: string[] }>);
    expect(person).toMatchObject({ email: ADA.email, firstname: 'Ada', lastname: 'Lovelace', language: 'de' });
    expect(person.roles).toContain('content_admin');
    const cookies = await page.context().cookies(system.url);
    const session = cookies.find((c) => c.name === 'kn_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

    await page.getByRole('button', { name: 'Your account' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in');
    const after = await system.api.get('/session').set('cookie', `kn_session=${session.value}`);
    expect(after.status).toBe(401);

    // A second sign-in is the same account (Keycloak remembers her: no login page this time).
    await page.getByRole('link', { name: /Example Corp/ }).click();
    await page.locator('header nav').waitFor();
    const again = await page.evaluate(async () => (await fetch('/api/v1/users/me')).json() as Promise<{ id: number }>);
    expect(again.id).toBe(person.id);
    expect(await usersWithEmail(ADA.email)).toHaveLength(1);
  });

  test('an unverified Keycloak email that an account has is refused with a page that says so; nothing is linked or signed in', async () => {
    const existing = await system.api
      .post(`${API}/users`)
      .set(...bearer(system.adminToken))
      .send({ email: BOB.email, firstname: 'Bob', lastname: 'Existing', language: 'en', password: 'bob-own-password', roles: ['user'] });
    expect(existing.status).toBe(201);
    const page = await newPage();
    const refused = page.waitForResponse((res) => new URL(res.url()).pathname === '/auth/oidc/callback');
    await signInWithKeycloak(page, BOB);
    expect((await refused).status()).toBe(401);
    await page.getByText(/has not verified that the address is yours/).waitFor();
    expect((await page.context().cookies(system.url)).some((c) => c.name === 'kn_session')).toBe(false);
    expect(await usersWithEmail(BOB.email)).toHaveLength(1);
    const linked = await system.services.users.runtime.db
      .selectFrom('identities')
      .select('user_id')
      .where('user_id', '=', existing.body.id)
      .execute();
    expect(linked).toEqual([]);
  });

  test("Keycloak's own access token for /mcp calls a tool as the person; its ID token (another audience) is refused", async () => {
    const metadata = await system.api.get('/.well-known/oauth-protected-resource/mcp');
    expect(metadata.body.authorization_servers[0]).toBe(ISSUER);
    // The resource owner password grant of the test client stands in for an assistant's sign-in on Keycloak's page.
    const grant = await fetch(`${ISSUER}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: 'mcp-assistant',
        username: ADA.username,
        password: ADA.password,
        scope: 'openid',
      }),
    });
    expect(grant.status).toBe(200);
    const { access_token, id_token } = (await grant.json()) as { access_token: string; id_token: string };
    const mcp = (token: string) =>
      system.api
        .post('/mcp')
        .set('authorization', `Bearer ${token}`)
        .set('accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_notifications', arguments: {} } });
    const called = await mcp(access_token);
    expect(called.status).toBe(200);
    expect(called.body.result.isError).toBeFalsy();
    const [ada] = await usersWithEmail(ADA.email);
    const sub = JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString()).sub as string;
    const link = await system.services.users.runtime.db
      .selectFrom('identities')
      .select('user_id')
      .where('issuer', '=', ISSUER!)
      .where('subject', '=', sub)
      .executeTakeFirst();
    expect(link?.user_id).toBe(ada!.id);
    const refused = await mcp(id_token);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/not for this resource/);
  });
});
