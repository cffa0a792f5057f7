import { contentEvents } from '../services/content/test/events.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let admin: [string, string];
const api = () => system.api;
const T = '/api/v1/tag-labels';

beforeAll(async () => {
  system = await startSystem();
  alice = await system.createUser();
  admin = bearer(system.adminToken);
  const d = await api()
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ title: 'Tagged question here', tags: ['java', 'javascript', 'C++', 'a/b c', 'Kotlin'] });
  await api()
    .put(`/api/v1/questions/${d.body.id}/publish`)
    .set(...alice.auth);
  await api()
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ title: 'A draft with a tag', tags: ['java'] });
});
afterAll(() => system?.stop());

test('GET /tags lists labels with total and paging; query matches prefixes first', async () => {
  const all = await api()
    .get('/api/v1/tags')
    .set(...alice.auth);
  expect(all.status).toBe(200);
  expect(all.body).toEqual({
    total: 5,
    _links: { self: { href: '/api/v1/tags' } },
    items: ['a/b c', 'C++', 'java', 'javascript', 'Kotlin'],
  });
  const page = await api()
    .get('/api/v1/tags?limit=2&offset=1')
    .set(...alice.auth);
  expect(page.body.items).toEqual(['C++', 'java']);
  expect(page.body.total).toBe(5);
  const q = await api()
    .get('/api/v1/tags?query=JAVA')
    .set(...alice.auth);
  expect(q.body).toMatchObject({ total: 2, items: ['java', 'javascript'] });
  const contains = await api()
    .get('/api/v1/tags?query=script')
    .set(...alice.auth);
  expect(contains.body.items).toEqual(['javascript']);
  expect(
    (
      await api()
        .get('/api/v1/tags?limit=x')
        .set(...alice.auth)
    ).status,
  ).toBe(400);
});

test('GET /tag-labels/:label with percent-encoded labels', async () => {
  const res = await api()
    .get(`${T}/${encodeURIComponent('C++')}`)
    .set(...alice.auth);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ label: 'C++', excluded_from_suggestions: false, image: null, question_count: 1 });
  const slash = await api()
    .get(`${T}/${encodeURIComponent('a/b c')}`)
    .set(...alice.auth);
  expect(slash.body.label).toBe('a/b c');
  // Drafts do not count.
  expect(
    (
      await api()
        .get(`${T}/java`)
        .set(...alice.auth)
    ).body.question_count,
  ).toBe(1);
  expect(
    (
      await api()
        .get(`${T}/nope`)
        .set(...alice.auth)
    ).status,
  ).toBe(404);
  expect(
    (
      await api()
        .get(`${T}/${'x'.repeat(192)}`)
        .set(...alice.auth)
    ).status,
  ).toBe(400);
});

test('PUT /tag-labels/:label changes excluded_from_suggestions (content_admin)', async () => {
  expect(
    (
      await api()
        .put(`${T}/Kotlin`)
        .set(...alice.auth)
        .send({ excluded_from_suggestions: true })
    ).status,
  ).toBe(403);
  const res = await api()
    .put(`${T}/Kotlin`)
    .set(...admin)
    .send({ excluded_from_suggestions: true });
  expect(res.status).toBe(200);
  expect(res.body.excluded_from_suggestions).toBe(true);
  expect(
    (
      await api()
        .put(`${T}/Kotlin`)
        .set(...admin)
        .send({ excluded_from_suggestions: 'yes' })
    ).status,
  ).toBe(400);
  expect(
    (
      await api()
        .put(`${T}/missing`)
        .set(...admin)
        .send({ excluded_from_suggestions: true })
    ).status,
  ).toBe(404);
  const e = (await contentEvents(system, 'content.tag.updated')).at(-1)!;
  expect(e.data.tag).toMatchObject({ label: 'Kotlin', excluded_from_suggestions: true });
});

test('tag links: replace semantics, creation of missing tags, 404s', async () => {
  expect(
    (
      await api()
        .get(`${T}/java/links`)
        .set(...alice.auth)
    ).body,
  ).toEqual([]);
  const put = await api()
    .put(`${T}/java/links`)
    .set(...admin)
    .send(['javascript', 'jvm', 'Spring Boot', 'jvm', 'java']);
  expect(put.status).toBe(200);
  expect(put.body).toEqual(['javascript', 'jvm', 'Spring Boot']);
  expect(
    (
      await api()
        .get(`${T}/jvm`)
        .set(...alice.auth)
    ).status,
  ).toBe(200);
  const replaced = await api()
    .put(`${T}/java/links`)
    .set(...admin)
    .send(['C++']);
  expect(replaced.body).toEqual(['C++']);
  expect(
    (
      await api()
        .get(`${T}/java/links`)
        .set(...alice.auth)
    ).body,
  ).toEqual(['C++']);
  expect(
    (
      await api()
        .get(`${T}/${encodeURIComponent('C++')}/links`)
        .set(...alice.auth)
    ).body,
  ).toEqual([]);
  expect(
    (
      await api()
        .get(`${T}/missing/links`)
        .set(...alice.auth)
    ).status,
  ).toBe(404);
  const before = (
    await api()
      .get('/api/v1/tags')
      .set(...alice.auth)
  ).body.total;
  expect(
    (
      await api()
        .put(`${T}/missing/links`)
        .set(...admin)
        .send(['new-one'])
    ).status,
  ).toBe(404);
  expect(
    (
      await api()
        .put(`${T}/java/links`)
        .set(...admin)
        .send(['x'.repeat(192)])
    ).status,
  ).toBe(400);
  expect(
    (
      await api()
        .put(`${T}/java/links`)
        .set(...admin)
        .send({ labels: [] })
    ).status,
  ).toBe(400);
  expect(
    (
      await api()
        .get('/api/v1/tags')
        .set(...alice.auth)
    ).body.total,
  ).toBe(before);
  expect(
    (
      await api()
        .put(`${T}/java/links`)
        .set(...alice.auth)
        .send([])
    ).status,
  ).toBe(403);
  const events = await contentEvents(system, 'content.tag');
  expect(events.filter((e) => e.subject === 'content.tag.created.v1').map((e) => e.data.tag.label)).toContain('Spring Boot');
  expect(events.filter((e) => e.subject === 'content.tag.links-updated.v1').at(-1)!.data).toMatchObject({
    tag: { label: 'java' },
    links: ['C++'],
  });
  const empty = await api()
    .put(`${T}/java/links`)
    .set(...admin)
    .send([]);
  expect(empty.body).toEqual([]);
});

test('a label of 191 characters is accepted', async () => {
  const label = 'y'.repeat(191);
  const res = await api()
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ tags: [label] });
  expect(res.status).toBe(201);
  expect(res.body.concepts[0].primary_label).toBe(label);
  expect(
    (
      await api()
        .get(`${T}/${label}`)
        .set(...alice.auth)
    ).status,
  ).toBe(200);
});
