import { json } from '@kn/db';
import { waitFor } from '@kn/testing';
import { API, closedSpaceQuestion, newQuestion, publishedSolution, readsQuestion, webSession } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

const SCIM = '/scim/v2';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let system: System;
let token: string;
let tokenId: string;
let counter = 0;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** A SCIM request with the provisioning token (or `auth` instead), the body as application/scim+json. */
function scim(method: Method, path: string, body?: unknown, headers: Record<string, string> = {}, auth: string | null = token) {
  let req = system.api[method](`${SCIM}${path}`);
  if (auth !== null) req = req.set(...bearer(auth));
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return body === undefined ? req : req.type('application/scim+json').send(JSON.stringify(body));
}

const newUser = (fields: Record<string, unknown> = {}) => {
  counter++;
  return {
    schemas: [USER, ENTERPRISE],
    userName: `leaver${counter}@corp.example`,
    externalId: `entra-${counter}`,
    name: { givenName: 'Lea', familyName: `Ver${counter}` },
    emails: [{ value: `leaver${counter}@corp.example`, type: 'work', primary: true }],
    preferredLanguage: 'de-CH',
    title: 'Brewer',
    active: true,
    [ENTERPRISE]: { department: 'Quality' },
    ...fields,
  };
};

const userCount = async () => (await scim('get', '/Users?count=0')).body.totalResults as number;
const expectScimError = (res: { status: number; body: unknown; headers: Record<string, string> }, status: number, scimType?: string) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(res.body).toMatchObject({ schemas: [ERROR], status: String(status), ...(scimType ? { scimType } : {}) });
  expect(typeof (res.body as { detail: unknown }).detail).toBe('string');
};

beforeAll(async () => {
  system = await startSystem();
  const minted = await system.api
    .post(`${API}/scim/tokens`)
    .set(...bearer(system.adminToken))
    .send({ name: 'Entra ID' });
  expect(minted.status).toBe(201);
  token = minted.body.token;
  tokenId = minted.body.id;
});

afterAll(async () => {
  await system?.stop();
});

describe('provisioning tokens', () => {
  test('listed without their secrets, only for user_admin; a revoked one and a normal API token are 401 at /scim/v2', async () => {
    const list = await system.api.get(`${API}/scim/tokens`).set(...bearer(system.adminToken));
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([expect.objectContaining({ id: tokenId, name: 'Entra ID', revoked: null })]);
    expect(JSON.stringify(list.body)).not.toContain(token);
    const plain = await system.createUser();
    expect((await system.api.get(`${API}/scim/tokens`).set(...plain.auth)).status).toBe(403);
    expect(
      (
        await system.api
          .post(`${API}/scim/tokens`)
          .set(...plain.auth)
          .send({ name: 'x' })
      ).status,
    ).toBe(403);

    expectScimError(await scim('get', '/Users', undefined, {}, null), 401);
    expectScimError(await scim('get', '/Users', undefined, {}, system.adminToken), 401);
    expectScimError(await scim('get', '/Users', undefined, {}, plain.token), 401);

    const other = await system.api
      .post(`${API}/scim/tokens`)
      .set(...bearer(system.adminToken))
      .send({ name: 'Okta' });
    expect((await scim('get', '/Users', undefined, {}, other.body.token)).status).toBe(200);
    expect((await system.api.delete(`${API}/scim/tokens/${other.body.id}`).set(...bearer(system.adminToken))).status).toBe(204);
    const before = await userCount();
    expectScimError(await scim('post', '/Users', newUser(), {}, other.body.token), 401);
    expect(await userCount()).toBe(before);
    expect((await system.api.delete(`${API}/scim/tokens/${other.body.id}`).set(...bearer(system.adminToken))).status).toBe(404);
  });
});

describe('discovery', () => {
  test('ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const config = await scim('get', '/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(config.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true },
      etag: { supported: true },
      bulk: { supported: false },
    });
    const types = await scim('get', '/ResourceTypes');
    expect(types.body.Resources.map((t: { id: string }) => t.id)).toEqual(['User', 'Group']);
    expect((await scim('get', '/ResourceTypes/Group')).body.endpoint).toBe('/Groups');
    const schemas = await scim('get', '/Schemas');
    expect(schemas.body.Resources.map((s: { id: string }) => s.id)).toEqual([USER, ENTERPRISE, GROUP]);
    expect((await scim('get', `/Schemas/${USER}`)).body.attributes.map((a: { name: string }) => a.name)).toContain('userName');
    expectScimError(await scim('get', '/Schemas/urn:nothing'), 404);
    expectScimError(await scim('get', '/Nothing'), 404);
  });
});

describe('a leaver, from provisioning to deletion', () => {
  test('provisioned, updated, given roles by a group, deactivated, reactivated and deleted', async () => {
    const created = await scim('post', '/Users', newUser());
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toMatch(/^application\/scim\+json/);
    const id = created.body.id as string;
    expect(created.headers.location).toMatch(new RegExp(`${SCIM}/Users/${id}$`));
    expect(created.headers.etag).toBe(created.body.meta.version);
    expect(created.body).toMatchObject({
      userName: `leaver${counter}@corp.example`,
      externalId: `entra-${counter}`,
      name: { givenName: 'Lea', familyName: `Ver${counter}` },
      active: true,
      title: 'Brewer',
      [ENTERPRISE]: { department: 'Quality' },
      groups: [],
    });
    const email = created.body.userName as string;

    // Our API sees the same person; an administrator gives them a password and the API role.
    const admin = bearer(system.adminToken);
    const user = await system.api.get(`${API}/users/${id}`).set(...admin);
    expect(user.body).toMatchObject({ email, language: 'de', department: 'Quality', position: 'Brewer', is_active: true });
    const password = 'a-long-password';
    expect(
      (
        await system.api
          .put(`${API}/users/${id}`)
          .set(...admin)
          .send({ password, roles: ['user', 'api_user'] })
      ).status,
    ).toBe(200);

    // Filters find them by userName, externalId, and both joined.
    for (const filter of [
      `userName eq "${email.toUpperCase()}"`,
      `externalId eq "entra-${counter}"`,
      `userName eq "${email}" and active eq true`,
      `userName eq "nobody@x.example" or name.familyName eq "Ver${counter}"`,
    ]) {
      const found = await scim('get', `/Users?filter=${encodeURIComponent(filter)}`);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id }] });
    }

    // Updated by PUT (the administrator's change made a new version), later by PATCH.
    const current = await scim('get', `/Users/${id}`);
    expect(current.headers.etag).not.toBe(created.headers.etag);
    const put = await scim(
      'put',
      `/Users/${id}`,
      {
        ...newUser(),
        userName: email,
        emails: [{ value: email, primary: true }],
        externalId: created.body.externalId,
        title: 'Head brewer',
      },
      { 'if-match': current.headers.etag! },
    );
    expect(put.status).toBe(200);
    expect(put.body.title).toBe('Head brewer');
    expect(put.headers.etag).not.toBe(current.headers.etag);

    // A group the network maps to a role.
    const settings = await system.api
      .put(`${API}/settings`)
      .set(...admin)
      .send({ idp_group_mappings: [{ group: 'Content admins', roles: ['content_admin'] }] });
    expect(settings.status).toBe(200);
    expect(settings.body.idp_group_mappings).toEqual([{ group: 'Content admins', roles: ['content_admin'], knowledge_spaces: [] }]);
    const apiToken = await system.login(email, password);
    const me = async (auth: [string, string]) => system.api.get(`${API}/users/me`).set(...auth);
    expect((await me(bearer(apiToken))).body.roles).toEqual(['user', 'api_user']);
    const group = await scim('post', '/Groups', { schemas: [GROUP], displayName: 'Content admins', members: [{ value: id }] });
    expect(group.status).toBe(201);
    expect(group.body.members).toEqual([expect.objectContaining({ value: id })]);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'content_admin', 'user']);
    expect((await scim('get', `/Users/${id}`)).body.groups).toEqual([
      expect.objectContaining({ value: group.body.id, display: 'Content admins' }),
    ]);
    const byMember = await scim('get', `/Groups?filter=${encodeURIComponent(`displayName eq "content ADMINS" and members eq "${id}"`)}`);
    expect(byMember.body.totalResults).toBe(1);
    // Leaving the group takes the role away again, and only it.
    const left = await scim('patch', `/Groups/${group.body.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
    });
    expect(left.status).toBe(200);
    expect(left.body.members).toEqual([]);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'user']);
    expect(
      (
        await scim('patch', `/Groups/${group.body.id}`, {
          schemas: [PATCH],
          Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }],
        })
      ).status,
    ).toBe(200);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'content_admin', 'user']);
    // Roles an administrator sets replace those set by hand; the group's still come on top.
    expect(
      (
        await system.api
          .put(`${API}/users/${id}`)
          .set(...admin)
          .send({ roles: ['user', 'api_user', 'manager'] })
      ).status,
    ).toBe(200);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'content_admin', 'manager', 'user']);
    // Changing the mappings changes the members' roles at once.
    const mappings = async (idp_group_mappings: unknown[]) =>
      expect(
        (
          await system.api
            .put(`${API}/settings`)
            .set(...admin)
            .send({ idp_group_mappings })
        ).status,
      ).toBe(200);
    await mappings([]);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'manager', 'user']);
    await mappings([{ group: 'content admins', roles: ['content_admin'] }]);
    expect((await me(bearer(apiToken))).body.roles.sort()).toEqual(['api_user', 'content_admin', 'manager', 'user']);

    // An expert on hops, in expert search.
    const asker = await system.createUser();
    const question = await newQuestion(system, asker.token, { title: 'Which hops give a citrus aroma?', tags: ['hops'] });
    const solutionId = await publishedSolution(system, apiToken, question.id, '<p>Cascade and Citra hops give citrus.</p>');
    const experts = async () => {
      await system.searchCaughtUp();
      const res = await system.api
        .post(`${API}/search/experts`)
        .set(...asker.auth)
        .send({ query: 'citrus hops aroma' });
      expect(res.status).toBe(200);
      return (res.body.experts as Array<{ user: { id: number } }>).map((e) => e.user.id);
    };
    expect(await experts()).toContain(Number(id));

    // Deactivated (Entra ID's capitalised op and string boolean): their API token and web session end with the very next request.
    const session = await webSession(system.api, { email, password });
    expect((await system.api.get(`${API}/users/me`).set('cookie', session.cookie)).status).toBe(200);
    const off = await scim('patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    expect((await me(bearer(apiToken))).status).toBe(401);
    expect((await system.api.get(`${API}/users/me`).set('cookie', session.cookie)).status).toBe(401);
    expect((await system.api.post(`${API}/auth/login`).send({ email, password })).status).toBe(401);
    expect((await system.api.get(`${API}/users/${id}`).set(...admin)).body.is_active).toBe(false);
    expect(await experts()).not.toContain(Number(id));
    // What they wrote stays.
    expect((await system.api.get(`${API}/solutions/${solutionId}`).set(...asker.auth)).body).toMatchObject({
      id: solutionId,
      user: `/api/v1/users/${id}`,
    });

    // Reactivated: they sign in again (the old token stays ended) and are an expert again.
    const on = await scim('patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    expect(on.body.active).toBe(true);
    expect((await me(bearer(apiToken))).status).toBe(401);
    const again = await system.login(email, password);
    expect((await me(bearer(again))).body.roles.sort()).toEqual(['api_user', 'content_admin', 'manager', 'user']);
    expect(await experts()).toContain(Number(id));

    // Deleted: gone from SCIM and from sign-in.
    expect((await scim('delete', `/Users/${id}`)).status).toBe(204);
    expectScimError(await scim('get', `/Users/${id}`), 404);
    expect((await me(bearer(again))).status).toBe(401);
    expect((await system.api.post(`${API}/auth/login`).send({ email, password })).status).toBe(401);
    expect((await scim('get', `/Groups/${group.body.id}`)).body.members).toEqual([]);
    expect(await experts()).not.toContain(Number(id));
  });

  test('POST .search: one resource type, or all of them paged as one list', async () => {
    const search = { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'displayName sw "Searchable"' };
    const user = await scim('post', '/Users', newUser({ name: undefined, displayName: 'Searchable Person' }));
    const group = await scim('post', '/Groups', { schemas: [GROUP], displayName: 'Searchable group' });
    expect((await scim('post', '/Users/.search', search)).body).toMatchObject({ totalResults: 1, Resources: [{ id: user.body.id }] });
    const all = await scim('post', '/.search', { ...search, count: 1, startIndex: 2 });
    expect(all.body).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1, Resources: [{ id: group.body.id }] });
    // userName is no attribute of a group: the groups match none, the users are searched.
    const byName = await scim('post', '/.search', { ...search, filter: `userName eq "${user.body.userName}"` });
    expect(byName.body).toMatchObject({ totalResults: 1, Resources: [{ id: user.body.id }] });
    expectScimError(await scim('post', '/.search', { ...search, filter: 'nothing eq "x"' }), 400, 'invalidFilter');
  });

  test('lists page with startIndex and count', async () => {
    for (let i = 0; i < 3; i++) expect((await scim('post', '/Users', newUser({ title: 'Pager' }))).status).toBe(201);
    const filter = encodeURIComponent('title eq "Pager"');
    const page = await scim('get', `/Users?filter=${filter}&startIndex=2&count=1`);
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    const all = await scim('get', `/Users?filter=${filter}&count=10`);
    expect(page.body.Resources[0].id).toBe(all.body.Resources[1].id);
    const only = await scim('get', `/Users?filter=${filter}&attributes=userName`);
    expect(Object.keys(only.body.Resources[0]).sort()).toEqual(['id', 'meta', 'schemas', 'userName']);
  });
});

describe('groups give membership of closed knowledge spaces', () => {
  const mappings = (idp_group_mappings: unknown[]) =>
    system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings });
  const members = (space: number, user_ids: number[]) =>
    system.api
      .put(`${API}/knowledge-spaces/${space}/members`)
      .set(...bearer(system.adminToken))
      .send({ user_ids });

  test('joining the mapped group lets a person read the space (GET and search), leaving takes it away; set by hand stays', async () => {
    const { space, question } = await closedSpaceQuestion(system, system.adminToken, 'Calibrating the lab hydrometer zymotically');
    const reads = (auth: [string, string]) => readsQuestion(system, auth, question, 'zymotically');
    const mapped = await mappings([{ group: 'Quality Lab', roles: [], knowledge_spaces: [space] }]);
    expect(mapped.status).toBe(200);
    expect(mapped.body.idp_group_mappings).toEqual([{ group: 'Quality Lab', roles: [], knowledge_spaces: [space] }]);
    try {
      const joiner = await system.createUser();
      const keeper = await system.createUser();
      expect((await members(space, [keeper.user.id])).status).toBe(200);
      expect(await reads(joiner.auth)).toEqual({ get: 404, listed: false });
      const group = await scim('post', '/Groups', {
        schemas: [GROUP],
        displayName: 'quality lab',
        members: [{ value: String(joiner.user.id) }, { value: String(keeper.user.id) }],
      });
      expect(group.status).toBe(201);
      await waitFor(async () => (await reads(joiner.auth)).get === 200, { what: 'the group member reads the closed space' });
      expect(await reads(joiner.auth)).toEqual({ get: 200, listed: true });
      // The administrator's member list is who they make members: those the group makes members stay.
      const byHand = await members(space, [keeper.user.id]);
      expect(byHand.status).toBe(200);
      expect(byHand.body.member_count).toBe(2);
      expect(await reads(joiner.auth)).toEqual({ get: 200, listed: true });
      const left = await scim('patch', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] });
      expect(left.status).toBe(200);
      await waitFor(async () => (await reads(joiner.auth)).get === 404, { what: 'the leaver no longer reads the closed space' });
      expect(await reads(joiner.auth)).toEqual({ get: 404, listed: false });
      // The membership an administrator set does not go with the group.
      expect(await reads(keeper.auth)).toEqual({ get: 200, listed: true });
      // Back in the group, then the mapping no longer names the space: the membership goes again.
      const back = await scim('patch', `/Groups/${group.body.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'add', path: 'members', value: [{ value: String(joiner.user.id) }] }],
      });
      expect(back.status).toBe(200);
      await waitFor(async () => (await reads(joiner.auth)).get === 200, { what: 'the member is back' });
      expect((await mappings([{ group: 'Quality Lab', roles: [] }])).status).toBe(200);
      await waitFor(async () => (await reads(joiner.auth)).get === 404, { what: 'the mapping no longer gives the space' });
      expect(await reads(keeper.auth)).toEqual({ get: 200, listed: true });
    } finally {
      expect((await mappings([])).status).toBe(200);
    }
  });

  test('a mapping stored before mappings could name knowledge spaces reads as naming none', async () => {
    const db = system.services.users.runtime.db;
    const row = await db.selectFrom('network_settings').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
    const old = { ...(row.settings as object), idp_group_mappings: [{ group: 'Old timers', roles: ['manager'] }] };
    await db
      .updateTable('network_settings')
      .set({ settings: json(old) })
      .where('id', '=', 1)
      .execute();
    try {
      const res = await system.api.get(`${API}/settings`).set(...bearer(system.adminToken));
      expect(res.body.idp_group_mappings).toEqual([{ group: 'Old timers', roles: ['manager'], knowledge_spaces: [] }]);
    } finally {
      expect((await mappings([])).status).toBe(200);
    }
  });

  test('a mapping naming a knowledge space that does not exist is 404 and changes nothing', async () => {
    const { space } = await closedSpaceQuestion(system, system.adminToken, 'A question of a space mapped once');
    const before = (await system.api.get(`${API}/settings`).set(...bearer(system.adminToken))).body.idp_group_mappings;
    const res = await mappings([
      { group: 'Ghosts', roles: ['user'], knowledge_spaces: [space] },
      { group: 'Spooks', roles: [], knowledge_spaces: [space, 999999] },
    ]);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: 'NotFound',
      message: expect.stringContaining('999999'),
      errors: [{ path: 'idp_group_mappings.1.knowledge_spaces.1', code: 'invalid_value', message: expect.any(String) }],
    });
    expect((await system.api.get(`${API}/settings`).set(...bearer(system.adminToken))).body.idp_group_mappings).toEqual(before);
    expect((await mappings([{ group: 'Ghosts', roles: [], knowledge_spaces: ['x'] }])).status).toBe(400);
  });
});

describe('bad input changes nothing', () => {
  test('unknown attributes are ignored (RFC 7644 §3.3 allows it)', async () => {
    const res = await scim('post', '/Users', newUser({ favouriteHop: 'Citra', nickName: 'Lee' }));
    expect(res.status).toBe(201);
    expect(res.body.favouriteHop).toBeUndefined();
    expect(res.body.nickName).toBeUndefined();
  });

  test('a userName or email that is taken: 409 uniqueness', async () => {
    const first = await scim('post', '/Users', newUser());
    expect(first.status).toBe(201);
    const before = await userCount();
    expectScimError(
      await scim('post', '/Users', newUser({ userName: first.body.userName.toUpperCase(), emails: undefined })),
      409,
      'uniqueness',
    );
    expectScimError(await scim('post', '/Users', newUser({ externalId: first.body.externalId })), 409, 'uniqueness');
    const second = await scim('post', '/Users', newUser());
    expectScimError(
      await scim('put', `/Users/${second.body.id}`, { ...newUser(), userName: first.body.userName, emails: undefined }),
      409,
      'uniqueness',
    );
    expect(await userCount()).toBe(before + 1);
    expect((await scim('get', `/Users/${second.body.id}`)).body.userName).toBe(second.body.userName);
  });

  test.each([
    ['userName eq', 'a value is missing'],
    ['userName xx "a"', 'an unknown operator'],
    ['(userName eq "a"', 'an unclosed parenthesis'],
    ['userName eq "a" and', 'a dangling and'],
    ['userName eq a@b', 'an unquoted string'],
    ['password eq "x"', 'an attribute it cannot filter by'],
    ['active eq "yes"', 'a boolean compared with a string'],
  ])('a filter it cannot parse (%s: %s): 400 invalidFilter', async (filter) => {
    expectScimError(await scim('get', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
  });

  test('If-Match with another version: 412, nothing changed', async () => {
    const created = await scim('post', '/Users', newUser());
    const stale = 'W/"stale"';
    expectScimError(await scim('put', `/Users/${created.body.id}`, { ...newUser(), title: 'Changed' }, { 'if-match': stale }), 412);
    expectScimError(
      await scim(
        'patch',
        `/Users/${created.body.id}`,
        { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] },
        { 'if-match': stale },
      ),
      412,
    );
    expectScimError(await scim('delete', `/Users/${created.body.id}`, undefined, { 'if-match': stale }), 412);
    const now = await scim('get', `/Users/${created.body.id}`);
    expect(now.body).toMatchObject({ title: 'Brewer', active: true });
    expect(now.headers.etag).toBe(created.headers.etag);
    expect((await scim('delete', `/Users/${created.body.id}`, undefined, { 'if-match': created.headers.etag! })).status).toBe(204);
  });

  test('malformed bodies: 400 with a scimType, nothing created', async () => {
    const before = await userCount();
    expectScimError(await scim('post', '/Users', { ...newUser(), schemas: undefined }), 400, 'invalidSyntax');
    expectScimError(await scim('post', '/Users', newUser({ emails: [{ value: 'not-an-email' }] })), 400, 'invalidValue');
    expectScimError(await scim('post', '/Users', newUser({ active: 'maybe' })), 400, 'invalidValue');
    const broken = await system.api
      .post(`${SCIM}/Users`)
      .set(...bearer(token))
      .type('application/scim+json')
      .send('{"schemas":');
    expectScimError(broken, 400, 'invalidSyntax');
    expect(await userCount()).toBe(before);
    const groups = (await scim('get', '/Groups?count=0')).body.totalResults;
    expectScimError(
      await scim('post', '/Groups', { schemas: [GROUP], displayName: 'Ghosts', members: [{ value: '999999' }] }),
      400,
      'invalidValue',
    );
    expect((await scim('get', '/Groups?count=0')).body.totalResults).toBe(groups);
    const user = await scim('post', '/Users', newUser());
    expectScimError(await scim('patch', `/Users/${user.body.id}`, { schemas: [PATCH], Operations: [{ op: 'remove' }] }), 400, 'noTarget');
    expectScimError(
      await scim('patch', `/Users/${user.body.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'emails[type eq', value: 'x' }],
      }),
      400,
      'invalidPath',
    );
  });
});
