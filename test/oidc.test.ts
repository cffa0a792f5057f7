import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import { waitFor } from '@kn/testing';
import supertest from 'supertest';
import { API, expectGroupGivesSpace } from './fixtures.ts';
import { type Person, type Spoil, startOidcProvider } from './oidc-provider.ts';
import { ADMIN, bearer, type System, startSystem } from './system.ts';

/*
 * Single sign-on (docs/sso.md) against a provider of the test's own (test/oidc-provider.ts), whose
 * ID tokens each test spoils in one way: openid-client in the gateway must refuse each, and a
 * refused sign-in creates, links and signs in nobody. Keycloak's own login page: test/oidc-keycloak.test.ts.
 */

let system: System;
let provider: Awaited<ReturnType<typeof startOidcProvider>>;
const CLIENT = { id: 'knowledge-network', secret: 'client-secret-for-tests' };

beforeAll(async () => {
  provider = await startOidcProvider(CLIENT);
  system = await startSystem({
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: CLIENT.id,
    OIDC_CLIENT_SECRET: CLIENT.secret,
    OIDC_NAME: 'Example Corp',
    // Starts are limited per client address: each test names its own, as a proxy on loopback would.
    TRUST_PROXY: 'loopback',
  });
});
afterAll(async () => {
  await system?.stop();
  await provider?.stop();
});

const cookieFrom = (res: { headers: Record<string, unknown> }, name: string) =>
  ((res.headers['set-cookie'] as string[] | undefined) ?? []).find((c) => c.startsWith(`${name}=`) && !c.startsWith(`${name}=;`));

let clients = 0;
/** GET /auth/oidc/start: the provider's authorization URL and the browser's flow cookie. */
async function start(next = '/', client = `10.0.${++clients}.1`, api = system.api) {
  const res = await api.get(`/auth/oidc/start?next=${encodeURIComponent(next)}`).set('x-forwarded-for', client);
  expect(res.status).toBe(303);
  return { authorize: new URL(res.headers.location!), flowCookie: cookieFrom(res, 'kn_oidc')!.split(';')[0]! };
}

/** The provider signs `person` in and sends the browser back: the callback path with its query. */
async function authorize(url: URL) {
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  return back.pathname + back.search;
}

/** The whole round trip as a browser makes it: the callback's answer. */
async function signIn(person: Person, options: { spoil?: Spoil; next?: string; api?: System['api'] } = {}) {
  const api = options.api ?? system.api;
  provider.state.person = person;
  provider.state.spoil = options.spoil ?? null;
  const { authorize: url, flowCookie } = await start(options.next, undefined, api);
  const callback = await authorize(url);
  const res = await api.get(callback).set('cookie', flowCookie).set('accept', 'application/json');
  return { res, callback, flowCookie, session: cookieFrom(res, 'kn_session')?.split(';')[0] };
}

const db = () => system.services.users.runtime.db;
const counts = async () => ({
  users: Number(
    (
      await db()
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  ),
  identities: Number(
    (
      await db()
        .selectFrom('identities')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  ),
  sessions: Number(
    (
      await db()
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('kind', '=', 'session')
        .executeTakeFirstOrThrow()
    ).n,
  ),
});
let people = 0;
const person = (fields: Partial<Person> = {}): Person => {
  people++;
  return {
    sub: `subject-${people}`,
    email: `sso${people}@example.com`,
    email_verified: true,
    given_name: 'Sso',
    family_name: `Person${people}`,
    ...fields,
  };
};
const me = async (session: string) => system.api.get(`${API}/users/me`).set('cookie', session);

test('GET /auth/oidc tells the sign-in page that single sign-on is on, and its name', async () => {
  const res = await system.api.get('/auth/oidc');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ enabled: true, name: 'Example Corp' });
});

test('the authorization request carries state, nonce and an S256 PKCE challenge; the code is redeemed with its verifier', async () => {
  const { res, session } = await signIn(person());
  expect(res.status).toBe(303);
  expect(session).toBeDefined();
  const asked = provider.state.authorizations.at(-1)!;
  expect(asked.get('response_type')).toBe('code');
  expect(asked.get('scope')).toBe('openid email profile');
  expect(asked.get('redirect_uri')).toBe(`${system.url}/auth/oidc/callback`);
  expect(asked.get('state')).toMatch(/^[\w-]{32,}$/);
  expect(asked.get('nonce')).toMatch(/^[\w-]{32,}$/);
  expect(asked.get('code_challenge_method')).toBe('S256');
  expect(asked.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  expect(provider.state.tokenRequests.at(-1)!.get('code_verifier')).toMatch(/^[\w-]{43,}$/);
});

test('a first sign-in creates the person from the claims and signs them in with the web session cookie', async () => {
  const before = await counts();
  const who = person({ given_name: 'Jürgen', family_name: 'Müller', locale: 'de-CH' });
  const { res, session } = await signIn(who, { next: '/questions?tab=mine' });
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/questions?tab=mine');
  expect(cookieFrom(res, 'kn_session')).toMatch(/HttpOnly/);
  expect(cookieFrom(res, 'kn_session')).toMatch(/SameSite=Strict/);
  const mine = await me(session!);
  expect(mine.status).toBe(200);
  expect(mine.body).toMatchObject({ email: who.email, firstname: 'Jürgen', lastname: 'Müller', language: 'de' });
  expect(mine.body.roles).toEqual(expect.arrayContaining(['user']));
  expect((await system.api.get('/session').set('cookie', session!)).body.user_id).toBe(mine.body.id);
  expect(await counts()).toEqual({ users: before.users + 1, identities: before.identities + 1, sessions: before.sessions + 1 });

  // Again, with another email at the provider: the same account (linked by issuer and subject).
  const again = await signIn({ ...who, email: `renamed-${who.email}` });
  expect((await me(again.session!)).body.id).toBe(mine.body.id);
  expect((await counts()).users).toBe(before.users + 1);
});

test('a verified email of an existing account signs in to that account and links it', async () => {
  const { user } = await system.createUser();
  const before = await counts();
  const { session } = await signIn(person({ email: user.email.toUpperCase(), email_verified: true }));
  expect((await me(session!)).body.id).toBe(user.id);
  expect(await counts()).toMatchObject({ users: before.users, identities: before.identities + 1 });
});

test('an unverified email of an existing account is refused: nothing created, linked or signed in', async () => {
  const { user } = await system.createUser();
  const before = await counts();
  for (const email_verified of [false, undefined]) {
    const { res, session } = await signIn(person({ email: user.email, email_verified }));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(/not verified/) });
    expect(session).toBeUndefined();
  }
  expect(await counts()).toEqual(before);
  // A browser gets a page that says so.
  provider.state.person = person({ email: user.email, email_verified: false });
  const { authorize: url, flowCookie } = await start();
  const page = await system.api
    .get(await authorize(url))
    .set('cookie', flowCookie)
    .set('accept', 'text/html');
  expect(page.status).toBe(401);
  expect(page.text).toMatch(/not verified/);
  expect(page.text).toMatch(/href="\/sign-in"/);
});

describe('an ID token that fails a check is refused (401), and nothing is created', () => {
  test.each<[Exclude<Spoil, null>, RegExp]>([
    ['signature', /signature/i],
    ['expired', /exp/i],
    ['issuer', /iss/i],
    ['audience', /aud/i],
    ['nonce', /nonce/i],
  ])('%s', async (spoil, says) => {
    const before = await counts();
    const { res, session } = await signIn(person(), { spoil });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(says) });
    expect(session).toBeUndefined();
    expect(await counts()).toEqual(before);
  });
});

test('a replayed callback (the same state, cookie and code again) is refused, though the provider would redeem the code again', async () => {
  const who = person();
  const { res, callback, flowCookie } = await signIn(who);
  expect(res.status).toBe(303);
  const before = await counts();
  const replay = await system.api.get(callback).set('cookie', flowCookie).set('accept', 'application/json');
  expect(replay.status).toBe(401);
  expect(replay.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(/used already/) });
  expect(cookieFrom(replay, 'kn_session')).toBeUndefined();
  expect(await counts()).toEqual(before);
});

test('a callback in a browser that did not start the sign-in (no or another flow cookie) is refused', async () => {
  provider.state.person = person();
  const before = await counts();
  const { authorize: url } = await start();
  const callback = await authorize(url);
  const other = await start();
  for (const cookie of [undefined, other.flowCookie]) {
    const req = system.api.get(callback).set('accept', 'application/json');
    const res = await (cookie ? req.set('cookie', cookie) : req);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
  }
  // The right browser and code, the state of the query changed: refused too.
  const mine = await start();
  const tampered = new URLSearchParams((await authorize(mine.authorize)).split('?')[1]);
  tampered.set('state', 'a-state-of-someone-else');
  const own = await system.api.get(`/auth/oidc/callback?${tampered}`).set('cookie', mine.flowCookie).set('accept', 'application/json');
  expect(own.status).toBe(401);
  expect(await counts()).toEqual(before);
});

test('a code injected into another sign-in (redeemed without its own PKCE verifier) is refused', async () => {
  const before = await counts();
  provider.state.person = person();
  // The victim's code, leaked from their redirect, in the attacker's own sign-in.
  const victim = await start();
  const victimCode = new URLSearchParams((await authorize(victim.authorize)).split('?')[1]).get('code')!;
  const attacker = await start();
  const attackerBack = new URLSearchParams((await authorize(attacker.authorize)).split('?')[1]);
  attackerBack.set('code', victimCode);
  const res = await system.api
    .get(`/auth/oidc/callback?${attackerBack}`)
    .set('cookie', attacker.flowCookie)
    .set('accept', 'application/json');
  expect(res.status).toBe(401);
  expect(res.body.message).toMatch(/PKCE/);
  expect(await counts()).toEqual(before);
});

test('next leads only to a page of this origin', async () => {
  for (const [next, lands] of [
    ['//evil.example/x', '/'],
    ['https://evil.example/', '/'],
    ['/\\evil.example', '/'],
    ['/sign-in', '/'],
    ['/questions/7#a', '/questions/7#a'],
  ]) {
    const { res } = await signIn(person(), { next });
    expect([next, res.headers.location]).toEqual([next, lands]);
  }
});

test('the provider saying no email address is refused; a session signs out as a password one does', async () => {
  const before = await counts();
  const { res } = await signIn(person({ email: undefined }));
  expect(res.status).toBe(401);
  expect(res.body.message).toMatch(/email/);
  expect(await counts()).toEqual(before);

  const { session } = await signIn(person());
  const csrf = (await system.api.get('/session').set('cookie', session!)).body.csrf;
  expect((await system.api.delete('/session').set('cookie', session!).set('x-csrf-token', csrf)).status).toBe(204);
  expect((await me(session!)).status).toBe(401);
});

test('a session from single sign-on is no bearer token', async () => {
  const { session } = await signIn(person());
  const token = session!.split('=')[1]!;
  expect((await system.api.get(`${API}/users/me`).set(...bearer(token))).status).toBe(401);
});

test('password_sign_in administrators: people sign in with single sign-on; administrators keep their password, the API its log-in', async () => {
  const settings = (change: Record<string, unknown>) =>
    system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send(change);
  expect((await settings({ password_sign_in: 'nobody' })).status).toBe(400);
  const { user } = await system.createUser();
  const password = 'password-1234';
  expect((await system.api.post('/session').send({ email: user.email, password })).status).toBe(201);
  const set = await settings({ password_sign_in: 'administrators' });
  expect(set.status).toBe(200);
  expect(set.body.password_sign_in).toBe('administrators');
  try {
    const refused = await system.api.post('/session').send({ email: user.email, password });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'Forbidden', message: expect.stringMatching(/single sign-on/) });
    expect(cookieFrom(refused, 'kn_session')).toBeUndefined();
    // A wrong password says only that, as before: the rule tells nothing about an address without its password.
    expect((await system.api.post('/session').send({ email: user.email, password: 'wrong-password' })).status).toBe(401);
    expect((await system.api.post('/session').send(ADMIN)).status).toBe(201);
    expect((await system.api.post(`${API}/auth/login`).send({ email: user.email, password })).status).toBe(200);
    const { session } = await signIn(person({ email: user.email }));
    expect((await me(session!)).body.id).toBe(user.id);
  } finally {
    expect((await settings({ password_sign_in: 'everyone' })).status).toBe(200);
  }
});

test('starts are limited per client address (login_attempts_per_minute), each keeping nothing beyond it', async () => {
  for (let i = 0; i < 10; i++) await start('/', '192.0.2.7');
  const res = await system.api.get('/auth/oidc/start').set('x-forwarded-for', '192.0.2.7').set('accept', 'application/json');
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('RateLimited');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(cookieFrom(res, 'kn_oidc')).toBeUndefined();
  // Another client is not held up by it.
  await start('/', '192.0.2.8');
});

test('the identity of a deleted account is refused; nothing is made in its place', async () => {
  const who = person();
  const { session } = await signIn(who);
  const id = (await me(session!)).body.id;
  expect((await system.api.delete(`${API}/users/${id}`).set(...bearer(system.adminToken))).status).toBe(204);
  const before = await counts();
  const { res } = await signIn(who);
  expect(res.status).toBe(401);
  expect(res.body.message).toMatch(/deleted/);
  expect(await counts()).toEqual(before);
});

test('OIDC_LINK_VERIFIED_EMAIL=false: not even a verified email links an existing account', async () => {
  const strict = await startGateway(
    loadGatewayConfig({
      ...system.env,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT.id,
      OIDC_CLIENT_SECRET: CLIENT.secret,
      OIDC_LINK_VERIFIED_EMAIL: 'false',
    }),
    { clock: system.clock },
  );
  try {
    const { user } = await system.createUser();
    const before = await counts();
    const { res } = await signIn(person({ email: user.email, email_verified: true }), { api: supertest(strict.url) });
    expect(res.status).toBe(401);
    expect(await counts()).toEqual(before);
  } finally {
    await strict.stop();
  }
});

test('the groups claim gives the roles of idp_group_mappings at each sign-in; roles set by hand stay', async () => {
  const mappings = (idp_group_mappings: unknown[]) =>
    system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings });
  expect((await mappings([{ group: 'Engineering', roles: ['content_admin'] }])).status).toBe(200);
  try {
    const { user } = await system.createUser({}, ['user', 'user_admin']);
    const who = person({ email: user.email, groups: ['/company/engineering', 'sales'] });
    const roles = async (session: string) => ((await me(session)).body.roles as string[]).sort();
    const first = (await signIn(who)).session!;
    expect(await roles(first)).toEqual(['api_user', 'content_admin', 'user', 'user_admin']);
    // Out of the group: the role it gave goes, at once also for the session signed in before; the one set by hand stays.
    await signIn({ ...who, groups: [] });
    await waitFor(async () => !(await roles(first)).includes('content_admin'));
    expect(await roles(first)).toEqual(['api_user', 'user', 'user_admin']);
    // An ID token without the claim leaves the roles as they are.
    await signIn({ ...who, groups: ['engineering'] });
    const { session } = await signIn({ ...who, groups: undefined });
    expect(await roles(session!)).toEqual(['api_user', 'content_admin', 'user', 'user_admin']);
  } finally {
    expect((await mappings([])).status).toBe(200);
  }
});

test('the groups claim gives membership of the closed knowledge spaces idp_group_mappings maps the groups to', async () => {
  const who = person();
  await expectGroupGivesSpace(system, { group: 'Brewlab', claimed: '/company/brewlab', word: 'quintessentially' }, async (groups) => {
    return (await signIn({ ...who, groups })).session!;
  });
});

test('a deactivated account (SCIM active: false) is refused, linked or found by its email', async () => {
  const who = person();
  const { session } = await signIn(who);
  const id = (await me(session!)).body.id as number;
  const { user } = await system.createUser();
  // What SCIM's active: false leaves in the users service (test/scim.test.ts goes through SCIM itself).
  await db().updateTable('users').set({ is_active: false }).where('id', 'in', [id, user.id]).execute();
  const before = await counts();
  for (const identity of [who, person({ email: user.email })]) {
    const { res } = await signIn(identity);
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/deactivated/);
  }
  expect(await counts()).toEqual(before);
});

test('claims that break the account rules (an email address that is none) are refused, nothing made', async () => {
  const before = await counts();
  for (const who of [person({ email: 'not-an-address' }), person({ sub: 's'.repeat(300) })]) {
    const { res } = await signIn(who);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(/claims are not usable/) });
  }
  expect(await counts()).toEqual(before);
});
