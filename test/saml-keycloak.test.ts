import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { buildWebApp, launchChromium } from './web-app.ts';

/*
 * SAML sign-in end to end (docs/sso.md): the web app in Chromium, the gateway, and a real Keycloak
 * with the realm of infra/keycloak/realm.json, whose SAML client `knowledge-network-saml` signs its
 * assertions and sends email, names and groups as attributes. infra/test.sh runs this file in the
 * Keycloak pass with KEYCLOAK_ISSUER set; without it the file's tests are skipped.
 */

const ISSUER = process.env.KEYCLOAK_ISSUER;
const ADA = { username: 'ada', password: 'ada-password-for-tests', email: 'ada.lovelace@example.com' };

let system: System;
let browser: Browser;
let webRoot: string;

(ISSUER ? describe : describe.skip)('SAML sign-in through Keycloak (KEYCLOAK_ISSUER)', () => {
  beforeAll(async () => {
    webRoot = buildWebApp('kn-web-saml-');
    // The realm's signing certificate, as an operator copies it from Keycloak's SAML descriptor.
    const descriptor = await (await fetch(`${ISSUER}/protocol/saml/descriptor`)).text();
    const certificate = /<(?:ds:)?X509Certificate>([^<]+)</.exec(descriptor)![1]!;
    system = await startSystem({
      WEB_ROOT: webRoot,
      SAML_ENTRY_POINT: `${ISSUER}/protocol/saml`,
      SAML_IDP_CERT: certificate,
      SAML_IDP_ISSUER: ISSUER!,
      SAML_ISSUER: 'knowledge-network-saml',
      SAML_NAME: 'Example Corp SAML',
      SAML_EMAIL_VERIFIED: 'true',
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    if (webRoot) rmSync(webRoot, { recursive: true, force: true });
  });

  test('a person clicks "Sign in with …", signs in on Keycloak by SAML and lands in the web app as themself; then signs out', async () => {
    // Ada is in Keycloak's group engineering (the SAML client's groups attribute).
    const mapped = await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings: [{ group: 'Engineering', roles: ['content_admin'] }] });
    expect(mapped.status).toBe(200);
    const context = await browser.newContext({ baseURL: system.url, viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      page.on('pageerror', (err) => {
        throw err;
      });
      await page.goto(`/sign-in?next=${encodeURIComponent('/experts')}`);
      const button = page.getByRole('link', { name: 'Sign in with Example Corp SAML' });
      await button.waitFor();
      const clicked = performance.now();
      await button.click();
      await page.locator('#username').waitFor();
      expect(new URL(page.url()).origin).toBe(new URL(ISSUER!).origin);
      await page.locator('#username').fill(ADA.username);
      await page.locator('#password').fill(ADA.password);
      const submitted = performance.now();
      const acs = page.waitForResponse((res) => new URL(res.url()).pathname === '/auth/saml/acs');
      await page.locator('#kc-login').click();
      expect((await acs).status()).toBe(303);
      await page.locator('header nav').waitFor();
      const landed = performance.now();
      expect(new URL(page.url()).pathname).toBe('/experts');
      // The round trip of the issue's measure: from the click to the signed-in page.
      console.log(
        `SAML sign-in through Keycloak: ${Math.round(landed - clicked)} ms from the click to the signed-in page ` +
          `(${Math.round(landed - submitted)} ms of it after the password was sent; test/saml-keycloak.test.ts)`,
      );
      const person = await page.evaluate(async () => (await fetch('/api/v1/users/me')).json() as Promise<{ id: number; roles: string[] }>);
      expect(person).toMatchObject({ email: ADA.email, firstname: 'Ada', lastname: 'Lovelace', language: 'de' });
      expect(person.roles).toContain('content_admin');
      const session = (await context.cookies(system.url)).find((c) => c.name === 'kn_session')!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      const identity = await system.services.users.runtime.db
        .selectFrom('identities')
        .select(['issuer', 'subject'])
        .where('user_id', '=', person.id)
        .executeTakeFirstOrThrow();
      expect(identity.issuer).toBe(ISSUER);

      await page.getByRole('button', { name: 'Your account' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((url) => url.pathname === '/sign-in');
      expect((await system.api.get('/session').set('cookie', `kn_session=${session.value}`)).status).toBe(401);
    } finally {
      await context.close();
    }
  });
});
