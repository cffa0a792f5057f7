import { contentEvents } from '../services/content/test/events.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let settingsAdmin: U;
const api = () => system.api;
const C = '/api/v1/categories';

beforeAll(async () => {
  system = await startSystem();
  alice = await system.createUser();
  settingsAdmin = await system.createUser({}, ['user', 'settings_admin']);
});
afterAll(() => system?.stop());

test('create, list, update and delete a category with translations', async () => {
  const created = await api()
    .post(C)
    .set(...settingsAdmin.auth)
    .send({
      name: 'Hardware',
      description: 'Devices',
      color: '#1a2B3c',
      translations: [{ language: 'de', name: 'Geräte', description: 'Hardware' }],
    });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({
    id: expect.any(Number),
    name: 'Hardware',
    description: 'Devices',
    color: '#1a2B3c',
    translations: [{ language: 'de', name: 'Geräte', description: 'Hardware' }],
  });
  const id = created.body.id;
  const all = await api()
    .get(C)
    .set(...alice.auth);
  expect(all.status).toBe(200);
  expect(all.body).toEqual([created.body]);

  const q = await api()
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ title: 'Which laptop should I get?', category: id });
  expect(q.body.category).toEqual(created.body);

  const updated = await api()
    .put(`${C}/${id}`)
    .set(...settingsAdmin.auth)
    .send({ color: '#000', translations: [] });
  expect(updated.status).toBe(200);
  expect(updated.body).toMatchObject({ name: 'Hardware', color: '#000', translations: [] });

  expect(
    (
      await api()
        .delete(`${C}/${id}`)
        .set(...settingsAdmin.auth)
    ).status,
  ).toBe(204);
  expect(
    (
      await api()
        .get(C)
        .set(...alice.auth)
    ).body,
  ).toEqual([]);
  const after = await api()
    .get(`/api/v1/questions/${q.body.id}`)
    .set(...alice.auth);
  expect(after.body.category).toBeNull();

  const subjects = (await contentEvents(system, 'content.category')).map((e) => e.subject);
  expect(subjects).toEqual(['content.category.created.v1', 'content.category.updated.v1', 'content.category.deleted.v1']);
  const deleted = (await contentEvents(system, 'content.category.deleted')).at(-1)!;
  expect(deleted.data.question_ids).toEqual([q.body.id]);
});

test('only settings administrators change categories', async () => {
  expect(
    (
      await api()
        .post(C)
        .set(...alice.auth)
        .send({ name: 'X' })
    ).status,
  ).toBe(403);
  expect(
    (
      await api()
        .put(`${C}/1`)
        .set(...alice.auth)
        .send({ name: 'X' })
    ).status,
  ).toBe(403);
  expect(
    (
      await api()
        .delete(`${C}/1`)
        .set(...alice.auth)
    ).status,
  ).toBe(403);
  expect(
    (
      await api()
        .post(C)
        .set(...bearer(system.adminToken))
        .send({ name: 'By the super admin' })
    ).status,
  ).toBe(201);
});

test('bad input and unknown ids', async () => {
  for (const body of [{}, { name: '' }, { name: 'X', color: 'red' }, { name: 'X', translations: [{ language: 'german', name: 'x' }] }]) {
    const res = await api()
      .post(C)
      .set(...settingsAdmin.auth)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ValidationError');
  }
  expect(
    (
      await api()
        .put(`${C}/999999`)
        .set(...settingsAdmin.auth)
        .send({ name: 'X' })
    ).status,
  ).toBe(404);
  expect(
    (
      await api()
        .delete(`${C}/999999`)
        .set(...settingsAdmin.auth)
    ).status,
  ).toBe(404);
  expect(
    (
      await api()
        .put(`${C}/abc`)
        .set(...settingsAdmin.auth)
        .send({ name: 'X' })
    ).status,
  ).toBe(400);
});
