import { type Operation, operations } from '@kn/contracts';
import { sql } from '@kn/db';
import { ADMIN, bearer, type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

const usersDb = () => system.services.users.runtime.db;
const setRoles = (id: number, roles: string[]) =>
  system.api
    .put(`/api/v1/users/${id}`)
    .set(...bearer(system.adminToken))
    .send({ roles });

describe('login', () => {
  test('returns a token with its expiry, about 30 days ahead', async () => {
    const res = await system.api.post('/api/v1/auth/login').send(ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const days = (Date.parse(res.body.expires) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
  });

  test('stores tokens hashed, never the token itself', async () => {
    const { token } = (await system.api.post('/api/v1/auth/login').send(ADMIN)).body;
    const rows = await usersDb().selectFrom('tokens').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  test.each([
    ['wrong password', { email: ADMIN.email, password: 'nope-nope' }],
    ['unknown email', { email: 'nobody@example.com', password: 'whatever1' }],
  ])('%s is 401', async (_name, body) => {
    const res = await system.api.post('/api/v1/auth/login').send(body);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
  });

  test('a user without api_user may not log in through the API', async () => {
    const res = await system.api
      .post('/api/v1/users')
      .set(...bearer(system.adminToken))
      .send({ email: 'web-only@example.com', firstname: 'Web', lastname: 'Only', language: 'en', password: 'password-1234' });
    expect(res.body.roles).toEqual(['user', 'manager']);
    const login = await system.api.post('/api/v1/auth/login').send({ email: 'web-only@example.com', password: 'password-1234' });
    expect(login.status).toBe(403);
    expect(login.body.code).toBe('Forbidden');
  });

  test('emails are matched without regard to case', async () => {
    const res = await system.api.post('/api/v1/auth/login').send({ ...ADMIN, email: ADMIN.email.toUpperCase() });
    expect(res.status).toBe(200);
  });
});

describe('tokens', () => {
  test('missing, malformed and unknown tokens are 401', async () => {
    for (const header of [undefined, 'Basic abc', 'Bearer', 'Bearer unknown-token']) {
      const req = system.api.get('/api/v1/users/me');
      if (header) req.set('authorization', header);
      const res = await req;
      expect({ header, status: res.status, code: res.body.code }).toEqual({ header, status: 401, code: 'Unauthorized' });
    }
  });

  test('an expired token is 401', async () => {
    const { user, token } = await system.createUser();
    await usersDb()
      .updateTable('tokens')
      .set({ expires: new Date(Date.now() - 1000) })
      .where('user_id', '=', user.id)
      .execute();
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(401);
  });

  test('a token the gateway has cached stops working when it expires', async () => {
    const { user, token } = await system.createUser();
    await usersDb()
      .updateTable('tokens')
      .set({ expires: new Date(system.clock.now().getTime() + 5_000) })
      .where('user_id', '=', user.id)
      .execute();
    // Cached for AUTH_CACHE_MS (10 s), but never past the token's expiry.
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(200);
    system.clock.advance(6_000);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(401);
  });

  test('a role taken away takes effect on the next request, though the gateway caches tokens', async () => {
    const { user, token } = await system.createUser({}, ['user_admin']);
    expect((await system.api.get('/api/v1/users?include=hidden').set(...bearer(token))).status).toBe(200);
    await system.api
      .put(`/api/v1/users/${user.id}`)
      .set(...bearer(system.adminToken))
      .send({ roles: ['user', 'api_user'] });
    expect((await system.api.get('/api/v1/users?include=hidden').set(...bearer(token))).status).toBe(403);
  });

  test('taking api_user away refuses the existing token on its very next request', async () => {
    const { user, token } = await system.createUser();
    // Resolved once, so the gateway has the token cached.
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(200);
    expect((await setRoles(user.id, ['user'])).status).toBe(200);
    const me = await system.api.get('/api/v1/users/me').set(...bearer(token));
    expect([me.status, me.body.code]).toEqual([403, 'Forbidden']);
    const question = await system.api
      .post('/api/v1/questions')
      .set(...bearer(token))
      .send({ title: 'Still asking after losing api_user?' });
    expect(question.status).toBe(403);
    const asked = await system.services.content.runtime.db.selectFrom('questions').select('id').where('author_id', '=', user.id).execute();
    expect(asked).toEqual([]);
    // The token was not revoked: the role given back opens it again.
    expect((await setRoles(user.id, ['user', 'api_user'])).status).toBe(200);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).body.id).toBe(user.id);
  });

  test("DELETE /auth/token revokes only the caller's token", async () => {
    const { user, token } = await system.createUser();
    const other = await system.login(user.email, 'password-1234');
    expect((await system.api.delete('/api/v1/auth/token').set(...bearer(token))).status).toBe(204);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(401);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(other))).status).toBe(200);
  });

  test("a deleted user's tokens stop working", async () => {
    const { user, token } = await system.createUser();
    expect((await system.api.delete(`/api/v1/users/${user.id}`).set(...bearer(system.adminToken))).status).toBe(204);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(token))).status).toBe(401);
  });

  test('POST /auth/tokens issues a token for another user (on_behalf_user only)', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    const target = await system.createUser();
    const res = await system.api
      .post('/api/v1/auth/tokens')
      .set(...technical.auth)
      .send({ user_id: target.user.id });
    expect(res.status).toBe(201);
    const me = await system.api.get('/api/v1/users/me').set(...bearer(res.body.token));
    expect(me.body.id).toBe(target.user.id);
    const denied = await system.api
      .post('/api/v1/auth/tokens')
      .set(...target.auth)
      .send({ user_id: technical.user.id });
    expect(denied.status).toBe(403);
    const missing = await system.api
      .post('/api/v1/auth/tokens')
      .set(...technical.auth)
      .send({ user_id: 987654 });
    expect(missing.status).toBe(404);
  });
});

describe('acting on behalf', () => {
  test('never grants a role the technical user lacks: the administrator is refused, by header and by POST /auth/tokens', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    const adminId = (await system.api.get('/api/v1/users/me').set(...bearer(system.adminToken))).body.id as number;
    const settings = await system.api
      .get('/api/v1/settings')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', String(adminId));
    expect([settings.status, settings.body.code]).toEqual([403, 'Forbidden']);
    expect(settings.body).not.toHaveProperty('network_name');
    const byEmail = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-Email', ADMIN.email);
    expect([byEmail.status, byEmail.body.code]).toEqual([403, 'Forbidden']);
    const token = await system.api
      .post('/api/v1/auth/tokens')
      .set(...technical.auth)
      .send({ user_id: adminId });
    expect([token.status, token.body.code]).toEqual([403, 'Forbidden']);
    expect(token.body).not.toHaveProperty('token');
    const issued = await usersDb().selectFrom('tokens').select('id').where('issued_by', '=', technical.user.id).execute();
    expect(issued).toEqual([]);
  });

  test('a technical user may act for users whose roles it holds (user and manager count for nothing)', async () => {
    const technical = await system.createUser({}, ['on_behalf_user', 'content_admin']);
    const editor = await system.createUser({}, ['user', 'manager', 'content_admin']);
    const me = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', String(editor.user.id));
    expect(me.body.id).toBe(editor.user.id);
    const token = await system.api
      .post('/api/v1/auth/tokens')
      .set(...technical.auth)
      .send({ user_id: editor.user.id });
    expect(token.status).toBe(201);
  });

  test('an on-behalf token stops at once when the target gains a role the issuer lacks, or the issuer loses on_behalf_user', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    const target = await system.createUser();
    const issue = async () =>
      (
        await system.api
          .post('/api/v1/auth/tokens')
          .set(...technical.auth)
          .send({ user_id: target.user.id })
      ).body.token as string;
    const promoted = await issue();
    expect((await system.api.get('/api/v1/users/me').set(...bearer(promoted))).body.id).toBe(target.user.id);
    expect((await setRoles(target.user.id, ['user', 'api_user', 'settings_admin'])).status).toBe(200);
    const settings = await system.api.get('/api/v1/settings').set(...bearer(promoted));
    expect([settings.status, settings.body.code]).toEqual([403, 'Forbidden']);
    expect(settings.body).not.toHaveProperty('network_name');
    expect((await setRoles(target.user.id, ['user', 'api_user'])).status).toBe(200);

    const demoted = await issue();
    expect((await system.api.get('/api/v1/users/me').set(...bearer(demoted))).body.id).toBe(target.user.id);
    expect((await setRoles(technical.user.id, ['user', 'api_user'])).status).toBe(200);
    expect((await system.api.get('/api/v1/users/me').set(...bearer(demoted))).status).toBe(403);
  });

  test('by user id or by email, with the on_behalf_user role', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    const target = await system.createUser();
    const byId = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', String(target.user.id));
    expect(byId.body.id).toBe(target.user.id);
    const byEmail = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-Email', target.user.email.toUpperCase());
    expect(byEmail.body.id).toBe(target.user.id);
  });

  test('more than one act-on-behalf header is MultipleOnBehalfHeaders', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    const target = await system.createUser();
    const both = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', String(target.user.id))
      .set('X-On-Behalf-Of-Email', target.user.email);
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('MultipleOnBehalfHeaders');
    const twice = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', [String(target.user.id), String(technical.user.id)] as unknown as string);
    expect(twice.body.code).toBe('MultipleOnBehalfHeaders');
  });

  test('without the role it is Forbidden; an unknown user NotFound; a bad id ValidationError', async () => {
    const plain = await system.createUser();
    const technical = await system.createUser({}, ['on_behalf_user']);
    const res = await system.api
      .get('/api/v1/users/me')
      .set(...plain.auth)
      .set('X-On-Behalf-Of-User-Id', String(technical.user.id));
    expect(res.status).toBe(403);
    const unknown = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-Email', 'ghost@example.com');
    expect(unknown.status).toBe(404);
    const bad = await system.api
      .get('/api/v1/users/me')
      .set(...technical.auth)
      .set('X-On-Behalf-Of-User-Id', 'abc');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('ValidationError');
  });

  test('authentication comes first: without a valid token, act-on-behalf headers are 401 whatever they say', async () => {
    const target = await system.createUser();
    const both = (req: ReturnType<typeof system.api.get>) =>
      req.set('X-On-Behalf-Of-User-Id', String(target.user.id)).set('X-On-Behalf-Of-Email', target.user.email);
    for (const res of [
      await both(system.api.get('/api/v1/users/me')),
      await both(system.api.get('/api/v1/users/me').set(...bearer('not-a-token-of-this-network'))),
      await system.api.get('/api/v1/users/me').set('X-On-Behalf-Of-Email', ''),
      await system.api
        .get('/api/v1/users/me')
        .set(...bearer('not-a-token'))
        .set('X-On-Behalf-Of-User-Id', 'abc'),
    ]) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 401, code: 'Unauthorized' });
    }
  });

  test('X-On-Behalf-Of-Email is an email address by the rule of every address: empty, 0 or a@b are 400', async () => {
    const technical = await system.createUser({}, ['on_behalf_user']);
    for (const value of ['', '0', 'a@b', `${'x'.repeat(180)}@example.com`]) {
      const res = await system.api
        .get('/api/v1/users/me')
        .set(...technical.auth)
        .set('X-On-Behalf-Of-Email', value);
      expect({ value, status: res.status, code: res.body.code, path: res.body.errors?.[0]?.path }).toEqual({
        value,
        status: 400,
        code: 'ValidationError',
        path: 'X-On-Behalf-Of-Email',
      });
    }
  });
});

describe('auth matrix: every endpoint with no token, a wrong role and the right role', () => {
  const http = (Object.entries(operations) as Array<[string, Operation]>).filter(([, op]) => op.http);
  const pathOf = (op: Operation) => op.http!.path.replace(/:(\w+)/g, (_m, name) => (name === 'label' ? 'some-tag' : '424242'));
  const send = (op: Operation, token?: string) => {
    const method = op.http!.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    const req = system.api[method](`/api/v1${pathOf(op)}`);
    if (token) req.set(...bearer(token));
    return req;
  };

  test.each(http.filter(([, op]) => op.http!.auth === 'user'))('%s without a token is 401', async (_name, op) => {
    const res = await send(op);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
  });

  test.each(http.filter(([, op]) => op.http!.roles))('%s with a token lacking the role is 403', async (_name, op) => {
    const plain = await system.createUser();
    const res = await send(op, plain.token);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('Forbidden');
  });

  test.each(http.filter(([, op]) => op.http!.roles))('%s with the right role passes authorisation', async (_name, op) => {
    const holder = await system.createUser({}, [...op.http!.roles!]);
    const res = await send(op, holder.token);
    expect([401, 403]).not.toContain(res.status);
    expect(res.status).toBeLessThan(500);
  });

  test('no endpoint answers 5xx to the administrator with placeholder input', async () => {
    for (const [name, op] of http) {
      if (name === 'revokeToken') continue;
      const res = await send(op, system.adminToken);
      expect({ name, status: res.status < 500 }).toEqual({ name, status: true });
    }
  });

  test('super_admin holds every role', async () => {
    const res = await system.api.get('/api/v1/settings').set(...bearer(system.adminToken));
    expect(res.status).toBe(200);
    const roles = await usersDb()
      .selectFrom('users')
      .select(sql<string[]>`roles`.as('roles'))
      .where('email', '=', ADMIN.email)
      .executeTakeFirstOrThrow();
    expect(roles.roles).toContain('super_admin');
  });
});
