import { API, contentEvents, draftQuestion, publishedQuestion, publishedSolution } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

let system: System;
let poser: Awaited<ReturnType<System['createUser']>>;
let author: Awaited<ReturnType<System['createUser']>>;
let other: Awaited<ReturnType<System['createUser']>>;
let admin: Awaited<ReturnType<System['createUser']>>;

beforeAll(async () => {
  system = await startSystem();
  poser = await system.createUser();
  author = await system.createUser();
  other = await system.createUser();
  admin = await system.createUser({}, ['user', 'content_admin']);
});
afterAll(() => system?.stop());

const commentFields = [
  'id',
  'description',
  'language',
  'question_id',
  'solution_id',
  'user',
  'upvote_count',
  'is_deleted',
  'created',
  'updated',
  'content_updated',
];

test('comments on questions and solutions: 201 Comment, listed with {total, items}', async () => {
  const q = await publishedQuestion(system, poser.token);
  const s = await publishedSolution(system, author.token, q);
  const before = (await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body.last_activity;

  const onQuestion = await system.api
    .post(`${API}/questions/${q}/comments`)
    .set(...other.auth)
    .send({ description: '<p>Which version do you use?<script>steal()</script></p>' });
  expect(onQuestion.status).toBe(201);
  expect(Object.keys(onQuestion.body).sort()).toEqual([...commentFields].sort());
  expect(onQuestion.body).toMatchObject({
    question_id: q,
    solution_id: null,
    user: `${API}/users/${other.user.id}`,
    upvote_count: 0,
    is_deleted: false,
    language: 'en',
    description: '<p>Which version do you use?</p>',
  });

  const onSolution = await system.api
    .post(`${API}/solutions/${s}/comments`)
    .set(...poser.auth)
    .send({ description: '<p>Das ist nicht die Lösung, die ich suche</p>' });
  expect(onSolution.status).toBe(201);
  expect(onSolution.body).toMatchObject({ question_id: q, solution_id: s, language: 'de' });

  const list = await system.api.get(`${API}/questions/${q}/comments`).set(...author.auth);
  expect(list.status).toBe(200);
  expect(list.body.total).toBe(2);
  expect(list.body.items.map((c: { id: number }) => c.id)).toEqual([onQuestion.body.id, onSolution.body.id]);
  expect(Date.parse((await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body.last_activity)).toBeGreaterThan(
    Date.parse(before),
  );

  const events = await contentEvents(system, 'content.comment.created.v1');
  const solutionComment = events.find((e) => e.data.comment.id === onSolution.body.id);
  expect(solutionComment?.data.comment.solution_author_id).toBe(author.user.id);
  expect(solutionComment?.data.question.author_id).toBe(poser.user.id);
});

test('comment errors: 404 missing targets, 409 closed targets, 400 empty descriptions', async () => {
  expect(
    (
      await system.api
        .post(`${API}/questions/999999/comments`)
        .set(...other.auth)
        .send({ description: 'x' })
    ).status,
  ).toBe(404);
  expect(
    (
      await system.api
        .post(`${API}/solutions/999999/comments`)
        .set(...other.auth)
        .send({ description: 'x' })
    ).status,
  ).toBe(404);
  expect((await system.api.get(`${API}/questions/999999/comments`).set(...other.auth)).status).toBe(404);
  const draft = await draftQuestion(system, poser.token);
  expect(
    (
      await system.api
        .post(`${API}/questions/${draft}/comments`)
        .set(...poser.auth)
        .send({ description: '<p>note</p>' })
    ).status,
  ).toBe(409);
  const q = await publishedQuestion(system, poser.token);
  const draftSolution = await system.api
    .post(`${API}/questions/${q}/solutions`)
    .set(...author.auth)
    .send({ description: '<p>wip</p>' });
  expect(
    (
      await system.api
        .post(`${API}/solutions/${draftSolution.body.id}/comments`)
        .set(...author.auth)
        .send({ description: '<p>n</p>' })
    ).status,
  ).toBe(409);
  expect(
    (
      await system.api
        .post(`${API}/solutions/${draftSolution.body.id}/comments`)
        .set(...other.auth)
        .send({ description: '<p>n</p>' })
    ).status,
  ).toBe(404);
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/comments`)
        .set(...other.auth)
        .send({ description: '   ' })
    ).status,
  ).toBe(400);
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/comments`)
        .set(...other.auth)
        .send({ description: '<script>x</script>' })
    ).status,
  ).toBe(400);
  expect((await system.api.get(`${API}/questions/${q}/comments`).set(...other.auth)).body.total).toBe(0);
});

test('edit and delete by the author or an admin only', async () => {
  const q = await publishedQuestion(system, poser.token);
  const c = await system.api
    .post(`${API}/questions/${q}/comments`)
    .set(...other.auth)
    .send({ description: '<p>first words</p>' });
  const denied = await system.api
    .put(`${API}/comments/${c.body.id}`)
    .set(...author.auth)
    .send({ description: '<p>hijack</p>' });
  expect(denied.status).toBe(403);
  const edited = await system.api
    .put(`${API}/comments/${c.body.id}`)
    .set(...other.auth)
    .send({ description: '<p>better words</p>' });
  expect(edited.status).toBe(200);
  expect(edited.body.description).toBe('<p>better words</p>');
  expect(
    (
      await system.api
        .put(`${API}/comments/${c.body.id}`)
        .set(...admin.auth)
        .send({ description: '<p>moderated</p>' })
    ).status,
  ).toBe(200);
  expect(
    (
      await system.api
        .put(`${API}/comments/999999`)
        .set(...other.auth)
        .send({ description: '<p>x</p>' })
    ).status,
  ).toBe(404);

  expect((await system.api.delete(`${API}/comments/${c.body.id}`).set(...author.auth)).status).toBe(403);
  expect((await system.api.delete(`${API}/comments/${c.body.id}`).set(...other.auth)).status).toBe(204);
  expect((await system.api.delete(`${API}/comments/${c.body.id}`).set(...other.auth)).status).toBe(404);
  expect((await system.api.get(`${API}/questions/${q}/comments`).set(...other.auth)).body.total).toBe(0);
  expect((await contentEvents(system, 'content.comment.updated.v1')).filter((e) => e.data.comment.id === c.body.id)).toHaveLength(2);
  expect((await contentEvents(system, 'content.comment.deleted.v1')).filter((e) => e.data.comment.id === c.body.id)).toHaveLength(1);
});

test('PUT /comments/:id/to-solution turns a comment into a published solution of its author', async () => {
  const q = await publishedQuestion(system, poser.token);
  const c = await system.api
    .post(`${API}/questions/${q}/comments`)
    .set(...other.auth)
    .send({ description: '<p>Just clear the cache directory</p>' });
  expect((await system.api.put(`${API}/comments/${c.body.id}/to-solution`).set(...author.auth)).status).toBe(403);
  const res = await system.api.put(`${API}/comments/${c.body.id}/to-solution`).set(...poser.auth);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    is_published: true,
    user: `${API}/users/${other.user.id}`,
    question: `${API}/questions/${q}`,
    description: '<p>Just clear the cache directory</p>',
  });
  expect((await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body.solution_count).toBe(1);
  expect((await system.api.get(`${API}/questions/${q}/comments`).set(...poser.auth)).body.total).toBe(0);
  expect((await system.api.put(`${API}/comments/${c.body.id}/to-solution`).set(...poser.auth)).status).toBe(404);
  const event = (await contentEvents(system, 'content.comment.converted.v1')).find((e) => e.data.comment.id === c.body.id);
  expect(event?.data.solution.id).toBe(res.body.id);
  expect(event?.data.comment.author_id).toBe(other.user.id);
});
