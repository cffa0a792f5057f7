import { createHmac } from 'node:crypto';
import { API } from './fixtures.ts';
import { startOidcProvider } from './oidc-provider.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * /mcp with single sign-on (docs/mcp.md, "The company's provider as authorization server"): the
 * metadata names the company's provider first, and /mcp takes the provider's own access tokens,
 * each check of them seen to refuse a token spoiled in its one way (test/oidc-provider.ts stands in
 * for the provider). Also CORS for browser-based clients. Keycloak's tokens: test/oidc-keycloak.test.ts.
 */

let system: System;
let provider: Awaited<ReturnType<typeof startOidcProvider>>;
let resource: string;
let linked: Awaited<ReturnType<System['createUser']>>;

beforeAll(async () => {
  provider = await startOidcProvider({ id: 'knowledge-network', secret: 'client-secret-for-tests' });
  system = await startSystem({
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: 'knowledge-network',
    OIDC_CLIENT_SECRET: 'client-secret-for-tests',
  });
  resource = `${system.url}/mcp`;
  linked = await system.createUser({ firstname: 'Lina', lastname: 'Linked' });
});
afterAll(async () => {
  await system?.stop();
  await provider?.stop();
});

const seconds = () => Math.floor(system.clock.now().getTime() / 1000);
/** The claims of a good access token for /mcp of the person `sub`, changed by `change`. */
const claims = (sub: string, change: Record<string, unknown> = {}) => ({
  sub,
  aud: resource,
  iat: seconds(),
  exp: seconds() + 300,
  scope: 'openid mcp',
  ...change,
});
const mcp = (token: string, body: Record<string, unknown> = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
  system.api.post('/mcp').set('authorization', `Bearer ${token}`).set('accept', 'application/json, text/event-stream').send(body);
const tool = (token: string, name: string, args: Record<string, unknown>) =>
  mcp(token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } });
const identities = () => system.services.users.runtime.db.selectFrom('identities').selectAll().execute();

/** A refused token: 401 in the contract's shape, the challenge that leads to sign-in, and the reason. */
async function expectRefused(token: string, reason: RegExp) {
  const res = await mcp(token);
  expect(res.status).toBe(401);
  expect(res.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(reason) });
  expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe("the company's provider as /mcp's authorization server", () => {
  test('the metadata names the provider first and the gateway second', async () => {
    const res = await system.api.get('/.well-known/oauth-protected-resource/mcp');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ resource, authorization_servers: [provider.issuer, `${system.url}/oauth`] });
  });

  test('a token of a person whose address an account has (verified) links that account, and the tools act as them', async () => {
    const token = await provider.accessToken(claims('p-linked', { email: linked.user.email, email_verified: true }));
    const drafted = await tool(token, 'draft_question', {
      title: 'Which torque for the quokka hub bolts?',
      description: 'asked through Keycloak',
    });
    expect(drafted.status).toBe(200);
    expect(drafted.body.result.isError).toBeFalsy();
    const id = drafted.body.result.structuredContent.id as number;
    // A draft is its author's alone: the linked account's own REST token reads it, another person's does not.
    const other = await system.createUser({ firstname: 'Otto', lastname: 'Other' });
    expect((await system.api.get(`${API}/questions/${id}`).set(...bearer(linked.token))).status).toBe(200);
    expect((await system.api.get(`${API}/questions/${id}`).set(...bearer(other.token))).status).toBe(404);
    expect(await identities()).toContainEqual(
      expect.objectContaining({ issuer: provider.issuer, subject: 'p-linked', user_id: linked.user.id }),
    );
    // The next token of the same person needs no email: the link is there.
    expect((await mcp(await provider.accessToken(claims('p-linked')))).status).toBe(200);
  });

  test("a first use with a new person's email makes their account, as a first sign-in does; once", async () => {
    const email = 'first.mcp@example.com';
    const make = async () =>
      mcp(await provider.accessToken(claims('p-new', { email, email_verified: true, given_name: 'Fran', family_name: 'First' })));
    expect((await make()).status).toBe(200);
    expect((await make()).status).toBe(200);
    const found = await system.api.get(`${API}/users?query=${encodeURIComponent(email)}`).set(...bearer(system.adminToken));
    expect(found.body.items).toEqual([expect.objectContaining({ email, firstname: 'Fran', lastname: 'First' })]);
  });

  test('an unknown subject without an email address is refused, and nothing is made', async () => {
    const before = await identities();
    await expectRefused(
      await provider.accessToken(claims('p-stranger')),
      /no account of this network is linked.*sign in to the web app once/,
    );
    expect(await identities()).toEqual(before);
  });

  test('the signature must verify against the key it names', async () => {
    await expectRefused(await provider.accessToken(claims('p-linked'), { key: 'stranger' }), /signature does not verify/);
  });

  test('the issuer must be the provider exactly', async () => {
    await expectRefused(await provider.accessToken(claims('p-linked', { iss: `${provider.issuer}/other` })), /claim iss/);
    await expectRefused(await provider.accessToken(claims('p-linked', { iss: `${provider.issuer}/` })), /claim iss/);
  });

  test('the audience must be /mcp (aud, or resource)', async () => {
    await expectRefused(await provider.accessToken(claims('p-linked', { aud: 'knowledge-network' })), /not for this resource.*\/mcp/);
    await expectRefused(await provider.accessToken(claims('p-linked', { aud: `${system.url}/api/v1` })), /not for this resource/);
    const res = await mcp(await provider.accessToken(claims('p-linked', { aud: 'knowledge-network', resource })));
    expect(res.status).toBe(200);
  });

  test('expiry and not-before hold, with half a minute of leeway', async () => {
    await expectRefused(await provider.accessToken(claims('p-linked', { exp: seconds() - 60 })), /expired/);
    await expectRefused(await provider.accessToken(claims('p-linked', { nbf: seconds() + 120 })), /not valid yet/);
    await expectRefused(await provider.accessToken(claims('p-linked', { exp: undefined })), /claim exp is missing/);
    expect((await mcp(await provider.accessToken(claims('p-linked', { exp: seconds() - 10 })))).status).toBe(200);
  });

  test('alg none and HS256 (even with the provider public key as its secret) are refused before any key is used', async () => {
    const payload = b64(claims('p-linked'));
    await expectRefused(`${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`, /algorithm none is not accepted/);
    const publicKey = JSON.stringify(provider.state.jwks[0]);
    const head = b64({ alg: 'HS256', typ: 'JWT', kid: 'k1' });
    const mac = createHmac('sha256', publicKey).update(`${head}.${payload}`).digest('base64url');
    await expectRefused(`${head}.${payload}.${mac}`, /algorithm HS256 is not accepted/);
  });

  test('a long token (a provider that lists many groups in it) is taken whole, up to 8 KiB', async () => {
    const groups = Array.from({ length: 200 }, (_, i) => `engineering-team-${i}`);
    const token = await provider.accessToken(claims('p-linked', { groups }));
    expect(token.length).toBeGreaterThan(5000);
    expect((await mcp(token)).status).toBe(200);
  });

  test('the linked account deleted, its tokens are refused at once', async () => {
    const gone = await system.createUser({ firstname: 'Gus', lastname: 'Gone' });
    const token = await provider.accessToken(claims('p-gone', { email: gone.user.email, email_verified: true }));
    expect((await mcp(token)).status).toBe(200);
    expect((await system.api.delete(`${API}/users/${gone.user.id}`).set(...bearer(system.adminToken))).status).toBe(204);
    await expectRefused(token, /account of this identity was deleted/);
  });

  test('the API token still works beside them', async () => {
    expect((await mcp(linked.token)).status).toBe(200);
  });

  test("an unknown key id fetches the provider's keys again, at most every 30 s: a rotated key is taken, a made-up one refused", async () => {
    expect((await mcp(await provider.accessToken(claims('p-linked')))).status).toBe(200);
    const fetches = provider.state.jwksFetches;
    // Within the floor, made-up key ids do not make the gateway fetch again.
    for (let i = 0; i < 3; i++)
      await expectRefused(
        await provider.accessToken(claims('p-linked'), { kid: `made-up-${i}`, key: 'stranger' }),
        /key the identity provider does not publish/,
      );
    expect(provider.state.jwksFetches).toBe(fetches);
    await provider.rotateKey();
    system.clock.advance(31_000);
    expect((await mcp(await provider.accessToken(claims('p-linked')))).status).toBe(200);
    expect(provider.state.jwksFetches).toBe(fetches + 1);
    // The withdrawn key is no longer good.
    await expectRefused(await provider.accessToken(claims('p-linked'), { kid: 'k1', key: 'stranger' }), /does not publish/);
  });
});

describe('CORS for browser-based MCP clients', () => {
  const origin = 'https://assistant.example.org';

  test('a preflight of /mcp is answered: the methods, the headers a client sends, no credentials', async () => {
    const res = await system.api
      .options('/mcp')
      .set('origin', origin)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'authorization, content-type, mcp-protocol-version');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    const allowed = res.headers['access-control-allow-headers'].toLowerCase();
    for (const header of ['authorization', 'content-type', 'mcp-protocol-version', 'last-event-id']) expect(allowed).toContain(header);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  test('answers of /mcp, a 401 too, may be read by another origin, with the challenge and the session header exposed', async () => {
    const refused = await system.api.post('/mcp').set('origin', origin).send({});
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    const exposed = refused.headers['access-control-expose-headers'].toLowerCase();
    expect(exposed).toContain('www-authenticate');
    expect(exposed).toContain('mcp-session-id');
    const ok = await mcp(linked.token).set('origin', origin);
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
  });

  test('the discovery documents and dynamic registration too', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server/oauth',
    ]) {
      const res = await system.api.get(path).set('origin', origin);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const preflight = await system.api.options(path).set('origin', origin).set('access-control-request-method', 'GET');
      expect(preflight.status).toBe(204);
    }
    // A client in a browser registers itself before anything else.
    const preflight = await system.api.options('/oauth/reg').set('origin', origin).set('access-control-request-method', 'POST');
    expect(preflight.status).toBe(204);
    const registered = await system.api
      .post('/oauth/reg')
      .set('origin', origin)
      .send({ redirect_uris: [`${origin}/callback`], token_endpoint_auth_method: 'none', client_name: 'browser assistant' });
    expect(registered.status).toBe(201);
    expect(registered.headers['access-control-allow-origin']).toBe('*');
  });

  test('the API itself stays without CORS', async () => {
    const res = await system.api
      .get(`${API}/users/me`)
      .set(...bearer(linked.token))
      .set('origin', origin);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
