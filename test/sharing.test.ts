import { API, contentEvents, draftQuestion, publishedQuestion, publishedSolution } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

let system: System;
let poser: Awaited<ReturnType<System['createUser']>>;
let author: Awaited<ReturnType<System['createUser']>>;
let expert: Awaited<ReturnType<System['createUser']>>;
let colleague: Awaited<ReturnType<System['createUser']>>;

beforeAll(async () => {
  system = await startSystem();
  poser = await system.createUser();
  author = await system.createUser();
  expert = await system.createUser();
  colleague = await system.createUser();
});
afterAll(() => system?.stop());

test('forward: 200 without body, counted per recipient with the User; deprecated user_id accepted', async () => {
  const q = await publishedQuestion(system, poser.token);
  const first = await system.api
    .post(`${API}/questions/${q}/forward`)
    .set(...author.auth)
    .send({ recipient: expert.user.id, message: 'you know this' });
  expect(first.status).toBe(200);
  expect(first.text).toBe('');
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/forward`)
        .set(...poser.auth)
        .send({ user_id: expert.user.id })
    ).status,
  ).toBe(200);
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/forward`)
        .set(...poser.auth)
        .send({ recipient: colleague.user.id })
    ).status,
  ).toBe(200);

  const list = await system.api.get(`${API}/questions/${q}/forward`).set(...author.auth);
  expect(list.status).toBe(200);
  expect(list.body.total).toBe(2);
  expect(list.body.items[0]).toMatchObject({ user_id: expert.user.id, count: 2, user: { id: expert.user.id, firstname: 'Test' } });
  expect(list.body.items[1]).toMatchObject({ user_id: colleague.user.id, count: 1 });

  const events = (await contentEvents(system, 'content.question.forwarded.v1')).filter((e) => e.data.question.id === q);
  expect(events).toHaveLength(3);
  expect(events[0].data).toMatchObject({ sender_id: author.user.id, recipient_id: expert.user.id, message: 'you know this' });
  expect(events[0].data.question.author_id).toBe(poser.user.id);
});

test('forward errors: no recipient 400, unknown user 404, missing question 404, draft question 409 or 404', async () => {
  const q = await publishedQuestion(system, poser.token);
  const none = await system.api
    .post(`${API}/questions/${q}/forward`)
    .set(...author.auth)
    .send({ message: 'hi' });
  expect(none.status).toBe(400);
  expect(none.body.code).toBe('ValidationError');
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/forward`)
        .set(...author.auth)
        .send({ recipient: 'abc' })
    ).status,
  ).toBe(400);
  const unknown = await system.api
    .post(`${API}/questions/${q}/forward`)
    .set(...author.auth)
    .send({ recipient: 999999 });
  expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'NotFound' });
  expect(unknown.body.errors[0].path).toBe('recipient');
  expect(
    (
      await system.api
        .post(`${API}/questions/999999/forward`)
        .set(...author.auth)
        .send({ recipient: expert.user.id })
    ).status,
  ).toBe(404);
  expect((await system.api.get(`${API}/questions/999999/forward`).set(...author.auth)).status).toBe(404);
  const draft = await draftQuestion(system, poser.token);
  expect(
    (
      await system.api
        .post(`${API}/questions/${draft}/forward`)
        .set(...poser.auth)
        .send({ recipient: expert.user.id })
    ).status,
  ).toBe(409);
  expect(
    (
      await system.api
        .post(`${API}/questions/${draft}/forward`)
        .set(...author.auth)
        .send({ recipient: expert.user.id })
    ).status,
  ).toBe(404);
  expect((await system.api.get(`${API}/questions/${q}/forward`).set(...author.auth)).body).toEqual({ total: 0, items: [] });
});

test('share a question and a solution: 200 empty, each recipient in the event; unknown recipients change nothing', async () => {
  const q = await publishedQuestion(system, poser.token);
  const s = await publishedSolution(system, author.token, q);
  const shared = await system.api
    .post(`${API}/questions/${q}/share`)
    .set(...author.auth)
    .send({ recipients: [expert.user.id, colleague.user.id, expert.user.id], message: 'look' });
  expect(shared.status).toBe(200);
  expect(shared.text).toBe('');
  const solutionShare = await system.api
    .post(`${API}/solutions/${s}/share`)
    .set(...poser.auth)
    .send({ recipients: [colleague.user.id] });
  expect(solutionShare.status).toBe(200);

  const bad = await system.api
    .post(`${API}/questions/${q}/share`)
    .set(...author.auth)
    .send({ recipients: [expert.user.id, 999999] });
  expect(bad.status).toBe(404);
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/share`)
        .set(...author.auth)
        .send({ recipients: [] })
    ).status,
  ).toBe(400);
  expect(
    (
      await system.api
        .post(`${API}/questions/${q}/share`)
        .set(...author.auth)
        .send({})
    ).status,
  ).toBe(400);
  expect(
    (
      await system.api
        .post(`${API}/solutions/999999/share`)
        .set(...author.auth)
        .send({ recipients: [expert.user.id] })
    ).status,
  ).toBe(404);
  const draft = await system.api
    .post(`${API}/questions/${q}/solutions`)
    .set(...expert.auth)
    .send({ description: '<p>wip</p>' });
  expect(
    (
      await system.api
        .post(`${API}/solutions/${draft.body.id}/share`)
        .set(...expert.auth)
        .send({ recipients: [poser.user.id] })
    ).status,
  ).toBe(409);

  const questionShares = (await contentEvents(system, 'content.question.shared.v1')).filter((e) => e.data.question.id === q);
  expect(questionShares).toHaveLength(1);
  expect(questionShares[0].data).toMatchObject({
    sender_id: author.user.id,
    recipients: [expert.user.id, colleague.user.id],
    message: 'look',
  });
  const solutionShares = (await contentEvents(system, 'content.solution.shared.v1')).filter((e) => e.data.solution.id === s);
  expect(solutionShares).toHaveLength(1);
  expect(solutionShares[0].data).toMatchObject({ sender_id: poser.user.id, recipients: [colleague.user.id], message: null });
  expect(solutionShares[0].data.solution.author_id).toBe(author.user.id);
});
