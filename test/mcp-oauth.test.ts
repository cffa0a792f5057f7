import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { API, publishedQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { buildWebApp, launchChromium } from './web-app.ts';

/*
 * An assistant connects to /mcp as the MCP specification says, with the SDK's own OAuth client:
 * discovery from the 401, dynamic registration, authorization code with PKCE through the web app's
 * sign-in and the gateway's consent page in Chromium, token, tool call. And what must be refused:
 * a redirect URI not registered, a token for another resource, an expired or revoked token.
 */

const PASSWORD = 'oauth-password-1234';
let system: System;
let browser: Browser;
let webRoot: string;
let callback: Server;
let callbackUrl: string;
/** The codes (or errors) the browser brought back to the client's redirect URI. */
const arrivals: URLSearchParams[] = [];
let person: { id: number; email: string };
let question = 0;

/** What a desktop assistant keeps: its registration, its tokens, the PKCE verifier of the flow under way. */
class AssistantAuth implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test assistant',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const mcpUrl = () => new URL(`${system.url}/mcp`);

/** The person signs in on the web app's page (the authorization URL leads there) and answers the consent page. */
async function authorizeInBrowser(url: URL, decision: 'Allow' | 'Deny', signIn = true) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const arrived = arrivals.length;
    await page.goto(url.href);
    if (signIn) {
      await page.waitForURL(/\/sign-in\?next=/);
      await page.getByLabel(/email/i).fill(person.email);
      await page.getByLabel(/password|passwort/i).fill(PASSWORD);
      await page.locator('form button[type=submit]').click();
    }
    await page.getByRole('heading', { name: 'Connect Test assistant?' }).waitFor();
    // The consent form only counts with the session's CSRF token: a post with the session's cookies
    // but without the token (as another page would send it) is refused, and the consent stays open.
    // Sent beside the page (the context's cookies, no navigation), so the page has nothing to race.
    const forged = await page.request.post(page.url(), { form: { decision: 'allow' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    await page.getByRole('heading', { name: 'Connect Test assistant?' }).waitFor();
    await page.getByRole('button', { name: decision }).click();
    await page.waitForURL((u) => u.href.startsWith(callbackUrl));
    return arrivals[arrived]!;
  } finally {
    await context.close();
  }
}

beforeAll(async () => {
  webRoot = buildWebApp();
  system = await startSystem({ WEB_ROOT: webRoot });
  callback = createServer((req, res) => {
    arrivals.push(new URL(req.url!, 'http://x').searchParams);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You may close this window.');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  const email = `oauth-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await system.api
    .post(`${API}/users`)
    .set(...bearer(system.adminToken))
    .send({ email, firstname: 'Olga', lastname: 'Auth', language: 'en', password: PASSWORD, roles: ['user'] });
  person = { id: created.body.id, email };
  question = await publishedQuestion(system, system.adminToken, 'How do I rotate the signing keys?');
  await system.searchCaughtUp();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callback?.close(resolve));
  await system?.stop();
  rmSync(webRoot, { recursive: true, force: true });
});

describe('OAuth for /mcp with the gateway as the authorization server', () => {
  test('the whole flow as a client does it: 401, discovery, registration, PKCE through sign-in and consent, token, tool call', async () => {
    const auth = new AssistantAuth();
    const first = new Client({ name: 'assistant', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: auth }))).rejects.toThrow(UnauthorizedError);
    // Discovery led to our metadata, registration gave a client id, the authorization URL carries PKCE and the resource.
    expect(auth.info?.client_id).toBeTruthy();
    const url = auth.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${system.url}/oauth/auth`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${system.url}/mcp`);

    const answer = await authorizeInBrowser(url, 'Allow');
    const code = answer.get('code')!;
    expect(answer.toString()).toMatch(/^code=/);
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: auth });
    await transport.finishAuth(code);
    expect(auth.saved?.access_token).toBeTruthy();
    expect(auth.saved?.refresh_token).toBeTruthy();

    const client = new Client({ name: 'assistant', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: auth }));
    try {
      const found = (await client.callTool({ name: 'search_questions', arguments: { query: 'signing keys' } })) as any;
      expect(found.structuredContent.questions.map((q: { id: number }) => q.id)).toEqual([question]);
      // The tools act as the person who consented.
      const draft = (await client.callTool({ name: 'draft_question', arguments: { title: 'Asked through an assistant' } })) as any;
      const path = `${API}/questions/${draft.structuredContent.id}`;
      const other = await system.createUser();
      expect((await system.api.get(path).set(...other.auth)).status).toBe(404);
      const theirs = await system.api
        .get(path)
        .set(...bearer(system.adminToken))
        .set('X-On-Behalf-Of-User-Id', String(person.id));
      expect(theirs.body).toMatchObject({ is_published: false, title: 'Asked through an assistant' });
    } finally {
      await client.close();
    }
    const tokenRequest = (params: Record<string, string>) =>
      fetch(`${system.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: auth.info!.client_id, ...params }),
      });
    const toolsList = (token: string) =>
      system.api
        .post('/mcp')
        .set(...bearer(token))
        .set('accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const expectRefused = async (token: string) => {
      const refused = await toolsList(token);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/resource_metadata=.*error="invalid_token"/);
    };

    // An hour on, the access token has expired and is refused; the refresh token gets a new one.
    system.clock.advance(3601_000);
    await expectRefused(auth.saved!.access_token);
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: auth.saved!.refresh_token! });
    expect(refreshed.status).toBe(200);
    const fresh = (await refreshed.json()) as { access_token: string; refresh_token?: string };
    expect(fresh.access_token).not.toBe(auth.saved!.access_token);
    expect((await toolsList(fresh.access_token)).status).toBe(200);

    // Revoked, the token is refused at once, with the challenge; its grant goes with it, so no refresh brings it back.
    const revoked = await fetch(`${system.url}/oauth/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: fresh.access_token, client_id: auth.info!.client_id }),
    });
    expect(revoked.status).toBe(200);
    await expectRefused(fresh.access_token);
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token ?? auth.saved!.refresh_token! });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');

    // The code was for one use: a second exchange fails and no token is issued.
    const reused = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl, code_verifier: auth.verifier });
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('the metadata: RFC 9728 for the resource, RFC 8414 for the authorization server with PKCE S256 and registration', async () => {
    const resource = await system.api.get('/.well-known/oauth-protected-resource/mcp');
    expect(resource.body.authorization_servers).toEqual([`${system.url}/oauth`]);
    const server = await system.api.get('/.well-known/oauth-authorization-server/oauth');
    expect(server.status).toBe(200);
    expect(server.body).toMatchObject({
      issuer: `${system.url}/oauth`,
      authorization_endpoint: `${system.url}/oauth/auth`,
      token_endpoint: `${system.url}/oauth/token`,
      registration_endpoint: `${system.url}/oauth/reg`,
      code_challenge_methods_supported: ['S256'],
    });
  });

  test('refused: a redirect URI not registered, no PKCE, declining, a token of another audience; never a 5xx', async () => {
    const auth = new AssistantAuth();
    await expect(
      new Client({ name: 'a', version: '1' }).connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: auth })),
    ).rejects.toThrow(UnauthorizedError);
    const url = auth.authorizationUrl!;
    const elsewhere = new URL(url);
    elsewhere.searchParams.set('redirect_uri', 'http://127.0.0.1:9/steal');
    const wrong = await fetch(elsewhere, { redirect: 'manual' });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toMatch(/redirect_uri/);
    const noPkce = new URL(url);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    const refusedPkce = await fetch(noPkce, { redirect: 'manual' });
    expect(refusedPkce.status).toBe(303);
    expect(refusedPkce.headers.get('location')).toMatch(/error=invalid_request.*PKCE/);
    const otherResource = new URL(url);
    otherResource.searchParams.set('resource', 'https://elsewhere.example.com/mcp');
    const refusedResource = await fetch(otherResource, { redirect: 'manual' });
    expect(refusedResource.headers.get('location')).toMatch(/error=invalid_target/);

    // Declining: the client is told access_denied and holds no token.
    const declined = await authorizeInBrowser(url, 'Deny');
    expect(declined.get('error')).toBe('access_denied');
    expect(auth.saved).toBeUndefined();

    // A token of this authorization server, issued for the resource at another address of it: not for this one.
    const there = new AssistantAuth();
    const localhost = new URL(`${system.url.replace('127.0.0.1', 'localhost')}/mcp`);
    await expect(
      new Client({ name: 'a', version: '1' }).connect(new StreamableHTTPClientTransport(localhost, { authProvider: there })),
    ).rejects.toThrow(UnauthorizedError);
    expect(there.authorizationUrl!.searchParams.get('resource')).toBe(localhost.href);
    const code = (await authorizeInBrowser(there.authorizationUrl!, 'Allow')).get('code')!;
    await new StreamableHTTPClientTransport(localhost, { authProvider: there }).finishAuth(code);
    const foreign = await system.api
      .post('/mcp')
      .set(...bearer(there.saved!.access_token))
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(foreign.status).toBe(401);
    expect(foreign.body.message).toBe('the access token is not for this resource');
    expect(foreign.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    const badRegistration = await fetch(`${system.url}/oauth/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['not a url'] }),
    });
    expect(badRegistration.status).toBe(400);
    const unknownInteraction = await system.api.get('/oauth/interaction/nothing-here').set('accept', 'text/html');
    expect(unknownInteraction.status).toBeLessThan(500);
  });
});
