import { usersProjectionCaughtUp } from '../services/content/test/events.ts';
import { API, newQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let bob: U;
let admin: U;
const Q = `${API}/questions`;
const ids: Record<string, number> = {};
let catA: number;
let catB: number;

const api = () => system.api;
const db = () => system.services.content.runtime.db;

async function publish(user: U, name: string, body: Record<string, unknown>) {
  ids[name] = (await newQuestion(system, user.token, { title: `Question about ${name} things`, ...body })).id;
  return ids[name];
}

const list = async (query: string, user: U = alice) => {
  const res = await api()
    .get(`${Q}${query}`)
    .set(...user.auth);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { total: number; _links: { self: { href: string } }; items: Array<{ id: number } & Record<string, unknown>> };
};
const names = (items: Array<{ id: number }>) => items.map((i) => Object.keys(ids).find((k) => ids[k] === i.id) ?? String(i.id));

beforeAll(async () => {
  system = await startSystem();
  alice = await system.createUser({ firstname: 'Alice' });
  bob = await system.createUser({ firstname: 'Bob' });
  admin = await system.createUser({ firstname: 'Ada' }, ['user', 'content_admin']);
  const adminAuth = bearer(system.adminToken);
  catA = (
    await api()
      .post('/api/v1/categories')
      .set(...adminAuth)
      .send({ name: 'A', color: '#ff0000' })
  ).body.id;
  catB = (
    await api()
      .post('/api/v1/categories')
      .set(...adminAuth)
      .send({ name: 'B', color: '#00ff00' })
  ).body.id;
  await publish(alice, 'one', { tags: ['java', 'spring'], category: catA, language: 'en' });
  await publish(alice, 'two', { tags: ['java'], category: catB, language: 'en' });
  await publish(bob, 'three', { tags: ['spring'], language: 'de' });
  await publish(bob, 'four', { tags: ['python'], language: 'fr' });
  // A draft and a deleted question never show by default.
  await api()
    .post(Q)
    .set(...alice.auth)
    .send({ title: 'An unpublished draft here' });
  const gone = await publish(alice, 'deleted', { language: 'en' });
  await api()
    .delete(`${Q}/${gone}`)
    .set(...alice.auth);
  // Counters and times as the solutions half and views would leave them.
  const hour = 3600_000;
  const set = async (name: string, v: { view_count?: number; solution_count?: number; upvote_count?: number; agoHours: number }) => {
    const { agoHours, ...counts } = v;
    await db()
      .updateTable('questions')
      .set({ ...counts, last_activity: new Date(Date.now() - agoHours * hour), published: new Date(Date.now() - (10 - agoHours) * hour) })
      .where('id', '=', ids[name])
      .execute();
  };
  await set('one', { view_count: 100, solution_count: 0, agoHours: 48 });
  await set('two', { view_count: 10, solution_count: 2, agoHours: 1 });
  await set('three', { view_count: 5, solution_count: 1, upvote_count: 1, agoHours: 3 });
  await set('four', { view_count: 50, solution_count: 0, agoHours: 5 });
  await api()
    .put(`${Q}/${ids.three}/follow`)
    .set(...alice.auth);
  await api()
    .put(`${Q}/${ids.four}/flag`)
    .set(...alice.auth)
    .send({ message: 'off topic' });
  await usersProjectionCaughtUp(system);
});
afterAll(() => system?.stop());

test('the default: published, live questions by last_activity desc, 10 per page, with envelope', async () => {
  const page = await list('');
  expect(names(page.items)).toEqual(['two', 'three', 'four', 'one']);
  expect(page.total).toBe(4);
  expect(page._links.self.href).toBe('/api/v1/questions');
  expect(page.items[0]).toHaveProperty('translations', []);
});

test('limit and offset page through the same order; total stays', async () => {
  const first = await list('?limit=2');
  const second = await list('?limit=2&offset=2');
  expect(names([...first.items, ...second.items])).toEqual(['two', 'three', 'four', 'one']);
  expect(second.total).toBe(4);
  expect(second._links.self.href).toBe('/api/v1/questions?limit=2&offset=2');
  expect((await list('?limit=0')).items).toEqual([]);
  expect((await list('?limit=0')).total).toBe(4);
  // Past the end: no items, and still the total (counted by the trigger's table, or row by row).
  const unsolved = (await list('?filter=unsolved&limit=100')).items.length;
  expect(unsolved).toBeGreaterThan(0);
  for (const query of ['?offset=4', '?offset=100&filter=unsolved', '?limit=2&offset=9999&sort=id.asc']) {
    const past = await list(query);
    expect(past.items).toEqual([]);
    expect(past.total).toBe(query.includes('unsolved') ? unsolved : 4);
  }
});

test('sort: several criteria like ORDER BY, views as view_count, directions', async () => {
  expect(names((await list('?sort=view_count.desc')).items)).toEqual(['one', 'four', 'two', 'three']);
  expect(names((await list('?sort=views.asc')).items)).toEqual(['three', 'two', 'four', 'one']);
  expect(names((await list('?sort=solution_count.desc,view_count.asc')).items)).toEqual(['two', 'three', 'four', 'one']);
  expect(names((await list('?sort=id.asc')).items)).toEqual(['one', 'two', 'three', 'four']);
  // published was set to now - (10 - agoHours) hours.
  expect(names((await list('?sort=date_published.desc')).items)).toEqual(['one', 'four', 'three', 'two']);
  // interest = views + 5·solutions + 3·upvotes: one 100, four 50, two 20, three 13.
  expect(names((await list('?sort=interest.desc')).items)).toEqual(['one', 'four', 'two', 'three']);
  // trending: recent interest wins: two (20 at 1h) beats four (50 at 5h) beats one (100 at 48h).
  expect(names((await list('?sort=trending.desc')).items).slice(0, 2)).toEqual(['two', 'four']);
  expect(names((await list('?filter=trending&sort=id.asc')).items).slice(0, 2)).toEqual(['two', 'four']);
  expect(names((await list('?sort=activity_and_interest.desc')).items)[0]).toBe('four');
});

test('filters combine with AND', async () => {
  expect(names((await list('?filter=my-questions')).items).sort()).toEqual(['one', 'two']);
  expect(names((await list('?filter=solved')).items).sort()).toEqual(['three', 'two']);
  expect(names((await list('?filter=unsolved')).items).sort()).toEqual(['four', 'one']);
  expect(names((await list('?filter=my-questions,unsolved')).items)).toEqual(['one']);
  expect(names((await list('?filter=following')).items)).toEqual(['three']);
  expect((await list('?filter=my-solutions')).total).toBe(0);
  expect((await list('?filter=accepted')).total).toBe(0);
  expect((await list('?filter=verified')).total).toBe(0);
  expect(names((await list('?filter=flagged', admin)).items)).toEqual(['four']);
  const res = await api()
    .get(`${Q}?filter=flagged`)
    .set(...bob.auth);
  expect(res.status).toBe(403);
  const bad = await api()
    .get(`${Q}?filter=bogus`)
    .set(...bob.auth);
  expect(bad.status).toBe(400);
});

test('my-solutions, accepted and verified read the solutions', async () => {
  const solution = (questionId: number, authorId: number, extra: Record<string, unknown>) => ({
    question_id: questionId,
    author_id: authorId,
    description: '<p>answer</p>',
    text: 'answer',
    language: 'en',
    is_published: true,
    published: new Date(),
    ...extra,
  });
  await db()
    .insertInto('solutions')
    .values([
      solution(ids.one, bob.user.id, { accepted_by_question_poser: new Date() }),
      solution(ids.two, alice.user.id, { validity_period: 'months_six', expires: new Date(Date.now() + 86400_000) }),
      solution(ids.three, alice.user.id, { validity_period: 'months_six', expires: new Date(Date.now() - 86400_000) }),
      solution(ids.four, bob.user.id, { is_published: false, published: null }),
    ])
    .execute();
  expect(names((await list('?filter=my-solutions', bob)).items)).toEqual(['one']);
  expect(names((await list('?filter=accepted')).items)).toEqual(['one']);
  expect(names((await list('?filter=verified')).items)).toEqual(['two']);
  await db().deleteFrom('solutions').execute();
});

test('tags with AND (default) and OR', async () => {
  expect(names((await list('?tags=java,spring')).items)).toEqual(['one']);
  expect(names((await list('?tags=java,spring&tag_filter_default_operator=OR')).items).sort()).toEqual(['one', 'three', 'two']);
  expect(names((await list('?tags=JAVA&tag_filter_default_operator=or')).items).sort()).toEqual(['one', 'two']);
  expect((await list('?tags=unknown-tag')).total).toBe(0);
  expect(
    (
      await api()
        .get(`${Q}?tag_filter_default_operator=XOR`)
        .set(...alice.auth)
    ).status,
  ).toBe(400);
});

test('categories, include_uncategorized and the deprecated category', async () => {
  expect(names((await list(`?categories=${catA}`)).items)).toEqual(['one']);
  expect(names((await list(`?categories=${catA},${catB}`)).items).sort()).toEqual(['one', 'two']);
  expect(names((await list(`?categories=${catA}&include_uncategorized=true`)).items).sort()).toEqual(['four', 'one', 'three']);
  expect(names((await list('?include_uncategorized=true')).items).sort()).toEqual(['four', 'three']);
  expect(names((await list(`?category=${catB}`)).items)).toEqual(['two']);
  expect(names((await list('?category=uncategorized')).items).sort()).toEqual(['four', 'three']);
  expect(
    (
      await api()
        .get(`${Q}?categories=abc`)
        .set(...alice.auth)
    ).status,
  ).toBe(400);
  expect(
    (
      await api()
        .get(`${Q}?category=abc`)
        .set(...alice.auth)
    ).status,
  ).toBe(400);
});

test('language_id, and the caller’s content languages as the default', async () => {
  expect(names((await list('?language_id=de,fr')).items).sort()).toEqual(['four', 'three']);
  const res = await api()
    .put('/api/v1/users/me/settings')
    .set(...bob.auth)
    .send({ content_languages: ['de'] });
  expect(res.status).toBe(200);
  await usersProjectionCaughtUp(system);
  expect(names((await list('', bob)).items)).toEqual(['three']);
  expect(names((await list('?language_id=fr', bob)).items)).toEqual(['four']);
  await api()
    .put('/api/v1/users/me/settings')
    .set(...bob.auth)
    .send({ has_all_languages: true });
  await usersProjectionCaughtUp(system);
  expect((await list('', bob)).total).toBe(4);
});

test('include_deleted only for content administrators', async () => {
  expect((await list('?include_deleted=true', admin)).total).toBe(5);
  expect((await list('?include_deleted=true', alice)).total).toBe(4);
});

test('translations: stored ones in the requested languages, never the question’s own', async () => {
  await db()
    .updateTable('questions')
    .set({
      translations: JSON.stringify([
        { language: 'de', title: 'Frage über eins', description: null },
        { language: 'en', title: 'same language', description: null },
      ]),
    })
    .where('id', '=', ids.one)
    .execute();
  const page = await list('?translations=de,en&sort=id.asc');
  expect(page.items[0].translations).toEqual([{ language: 'de', title: 'Frage über eins', description: null }]);
  expect(page.items[1].translations).toEqual([]);
});

test('bad parameters answer 400', async () => {
  for (const q of [
    'limit=-1',
    'limit=abc',
    'offset=-5',
    'sort=bogus.desc',
    'sort=id.sideways',
    'include_deleted=yes',
    'language_id=english',
    'knowledge_space=x',
  ]) {
    const r = await api()
      .get(`${Q}?${q}`)
      .set(...alice.auth);
    expect([q, r.status, r.body.code]).toEqual([q, 400, 'ValidationError']);
  }
  expect((await api().get(Q)).status).toBe(401);
});

test('totals follow publishing, deleting, restoring and closed spaces', async () => {
  const extra = await publish(bob, 'extra', { language: 'en' });
  expect((await list('')).total).toBe(5);
  await api()
    .delete(`${Q}/${extra}`)
    .set(...bob.auth);
  expect((await list('')).total).toBe(4);
  await api()
    .put(`${Q}/${extra}/restore`)
    .set(...bob.auth);
  expect((await list('')).total).toBe(5);
  expect((await list('?language_id=en')).total).toBe(3);
  const space = await api()
    .post('/api/v1/knowledge-spaces')
    .set(...bearer(system.adminToken))
    .send({ name: 'Closed', is_closed: true });
  await api()
    .put(`/api/v1/knowledge-spaces/${space.body.id}/members`)
    .set(...bearer(system.adminToken))
    .send({ user_ids: [bob.user.id] });
  const secret = await publish(bob, 'secret', { language: 'en', knowledge_space: space.body.id });
  expect((await list('', bob)).total).toBe(6);
  expect((await list('')).total).toBe(5);
  expect((await list('', admin)).total).toBe(6);
  expect(names((await list('?limit=100')).items)).not.toContain('secret');
  for (const id of [extra, secret])
    await api()
      .delete(`${Q}/${id}`)
      .set(...bob.auth);
  expect((await list('', bob)).total).toBe(4);
});
