import { call } from '@kn/bus';
import { Roles, usersOperations } from '@kn/contracts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

const importUsers = (users: Array<Record<string, unknown>>) =>
  call(system.services.users.runtime.bus, 'importUsers', usersOperations.importUsers, {
    actor: { id: 1, roles: [...Roles], token_id: null },
    params: undefined,
    query: undefined,
    body: { users } as never,
    requestId: 'test-import',
    url: '/internal',
  });

const brewer = (n: number) => ({
  external_id: `stackexchange:beer:user:${n}`,
  email: `user${n}@beer.stackexchange.invalid`,
  firstname: `Brewer${n}`,
  lastname: '',
  language: 'en',
  created: '2014-01-21T17:45:53.587Z',
  last_seen: '2020-05-01T10:00:00.000Z',
});

test('imports users with their original dates, once', async () => {
  const first = await importUsers([brewer(1), brewer(2), brewer(2)]);
  expect(first.created).toBe(2);
  const second = await importUsers([brewer(1), brewer(2), brewer(3)]);
  expect(second.created).toBe(1);
  expect(second.ids['stackexchange:beer:user:1']).toBe(first.ids['stackexchange:beer:user:1']);
  const user = await system.api.get(`/api/v1/users/${first.ids['stackexchange:beer:user:1']}`).set(...bearer(system.adminToken));
  expect(user.body).toMatchObject({ firstname: 'Brewer1', first_seen: '2014-01-21T17:45:53.587Z', last_seen: '2020-05-01T10:00:00.000Z' });
  const search = await system.api.get('/api/v1/users?query=brewer').set(...bearer(system.adminToken));
  expect(search.body.total).toBe(3);
});

test('an email that already has an account is the same person', async () => {
  const { user } = await system.createUser({ email: 'known@example.com' });
  const result = await importUsers([{ ...brewer(9), email: 'KNOWN@example.com' }]);
  expect(result).toEqual({ ids: { 'stackexchange:beer:user:9': user.id }, created: 0 });
});

test('a malformed batch is refused whole', async () => {
  await expect(importUsers([brewer(20), { ...brewer(21), email: 'not-an-email' }])).rejects.toMatchObject({
    status: 400,
    code: 'ValidationError',
  });
  const search = await system.api.get('/api/v1/users?query=brewer20').set(...bearer(system.adminToken));
  expect(search.body.total).toBe(0);
});
