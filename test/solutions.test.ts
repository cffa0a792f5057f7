import { API, contentEvents, draftQuestion, publishedQuestion, publishedSolution } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

let system: System;
let poser: Awaited<ReturnType<System['createUser']>>;
let author: Awaited<ReturnType<System['createUser']>>;
let other: Awaited<ReturnType<System['createUser']>>;
let admin: Awaited<ReturnType<System['createUser']>>;
let questionId: number;

beforeAll(async () => {
  system = await startSystem();
  poser = await system.createUser();
  author = await system.createUser();
  other = await system.createUser();
  admin = await system.createUser({}, ['user', 'content_admin']);
  questionId = await publishedQuestion(system, poser.token);
});
afterAll(() => system?.stop());

const solutionFields = [
  'id',
  'is_published',
  'published',
  'rating',
  'rating_count',
  'description',
  'user',
  'is_deleted',
  'created',
  'updated',
  'content_updated',
  'question',
  'tag_relations',
  'attachments',
  'validity_period',
  'expires',
  'upvote_count',
];

describe('drafts', () => {
  test('creating a draft answers 201 with the Solution minus language; the draft endpoint returns it without accepted_by_question_poser', async () => {
    const q = await publishedQuestion(system, poser.token);
    const none = await system.api.get(`${API}/questions/${q}/solutions/draft`).set(...author.auth);
    expect(none.status).toBe(204);
    expect(none.text).toBe('');

    const res = await system.api
      .post(`${API}/questions/${q}/solutions`)
      .set(...author.auth)
      .send({ description: '<p>Try <b>this</b><script>alert(1)</script><img src="x" onerror="alert(2)"></p>' });
    expect(res.status).toBe(201);
    for (const f of [...solutionFields, 'accepted_by_question_poser']) expect(res.body).toHaveProperty(f);
    expect(res.body).not.toHaveProperty('language');
    expect(res.body).toMatchObject({
      is_published: false,
      published: null,
      rating: null,
      rating_count: 0,
      upvote_count: 0,
      is_deleted: false,
      tag_relations: [],
      validity_period: null,
      expires: null,
      accepted_by_question_poser: null,
      user: `${API}/users/${author.user.id}`,
      question: `${API}/questions/${q}`,
      attachments: `${API}/solutions/${res.body.id}/attachments`,
    });
    expect(res.body.description).not.toMatch(/script|onerror|alert/);
    expect(res.body.description).toContain('<b>this</b>');
    expect(res.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const draft = await system.api.get(`${API}/questions/${q}/solutions/draft`).set(...author.auth);
    expect(draft.status).toBe(200);
    expect(draft.body.id).toBe(res.body.id);
    expect(draft.body.language).toBe('en');
    expect(draft.body).not.toHaveProperty('accepted_by_question_poser');

    // A second create updates the same draft.
    const again = await system.api
      .post(`${API}/questions/${q}/solutions`)
      .set(...author.auth)
      .send({ description: '<p>Second thoughts on it</p>' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(res.body.id);
    expect(again.body.description).toBe('<p>Second thoughts on it</p>');

    // Other users see neither the draft nor a draft of their own.
    expect((await system.api.get(`${API}/solutions/${res.body.id}`).set(...other.auth)).status).toBe(404);
    expect((await system.api.get(`${API}/questions/${q}/solutions/draft`).set(...other.auth)).status).toBe(204);
    // Drafts do not count.
    const question = await system.api.get(`${API}/questions/${q}`).set(...poser.auth);
    expect(question.body.solution_count).toBe(0);
  });

  test('two answers of one person to one question at the same time: one draft, and both are answered with it', async () => {
    const q = await publishedQuestion(system, poser.token, 'Which draft wins when two tabs answer at once?');
    const answer = (text: string) =>
      system.api
        .post(`${API}/questions/${q}/solutions`)
        .set(...author.auth)
        .send({ description: `<p>${text}</p>` })
        .then((r) => r);
    // The first is held inside its transaction; the second waits for it, then edits its draft.
    const [first, second] = await system.holding('content.solutions', async (waiting) => {
      const first = answer('from the first tab');
      await waiting('relation');
      const second = answer('from the second tab');
      await waiting('advisory');
      return [first, second];
    });
    const [a, b] = [await first, await second];
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).toBe(a.body.id);
    expect(b.body.description).toContain('from the second tab');
    const drafts = await system.services.content.runtime.db
      .selectFrom('solutions')
      .select('id')
      .where('question_id', '=', q)
      .where('author_id', '=', author.user.id)
      .execute();
    expect(drafts).toEqual([{ id: a.body.id }]);
  });

  test('404 for a missing question, 409 for unpublished or deleted questions, 400 for empty or script-only descriptions', async () => {
    expect(
      (
        await system.api
          .post(`${API}/questions/999999/solutions`)
          .set(...author.auth)
          .send({ description: 'x' })
      ).status,
    ).toBe(404);
    expect((await system.api.get(`${API}/questions/999999/solutions/draft`).set(...author.auth)).status).toBe(404);

    const draft = await draftQuestion(system, poser.token);
    const onDraft = await system.api
      .post(`${API}/questions/${draft}/solutions`)
      .set(...poser.auth)
      .send({ description: '<p>answer</p>' });
    expect(onDraft.status).toBe(409);
    expect(onDraft.body.code).toBe('Conflict');
    // Someone else's draft question is invisible: 404.
    expect(
      (
        await system.api
          .post(`${API}/questions/${draft}/solutions`)
          .set(...author.auth)
          .send({ description: '<p>a</p>' })
      ).status,
    ).toBe(404);

    const deleted = await publishedQuestion(system, poser.token);
    expect((await system.api.delete(`${API}/questions/${deleted}`).set(...poser.auth)).status).toBe(204);
    const onDeleted = await system.api
      .post(`${API}/questions/${deleted}/solutions`)
      .set(...admin.auth)
      .send({ description: '<p>answer</p>' });
    expect(onDeleted.status).toBe(409);

    const empty = await system.api
      .post(`${API}/questions/${questionId}/solutions`)
      .set(...author.auth)
      .send({ description: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('ValidationError');
    const scriptOnly = await system.api
      .post(`${API}/questions/${questionId}/solutions`)
      .set(...author.auth)
      .send({ description: '<script>alert(1)</script>' });
    expect(scriptOnly.status).toBe(400);
    const missing = await system.api
      .post(`${API}/questions/${questionId}/solutions`)
      .set(...author.auth)
      .send({});
    expect(missing.status).toBe(400);
    expect((await system.api.get(`${API}/questions/${questionId}/solutions/draft`).set(...author.auth)).status).toBe(204);
    expect((await system.api.get(`${API}/questions/abc/solutions/draft`).set(...author.auth)).status).toBe(400);
  });
});

describe('publishing and the question counters', () => {
  test('publish makes the solution visible, counts it and moves last_activity; a second publish is 409', async () => {
    const q = await publishedQuestion(system, poser.token);
    const before = (await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body;
    const created = await system.api
      .post(`${API}/questions/${q}/solutions`)
      .set(...author.auth)
      .send({ description: '<p>The answer is here</p>' });
    expect((await system.api.put(`${API}/solutions/${created.body.id}/publish`).set(...other.auth)).status).toBe(404);
    const published = await system.api.put(`${API}/solutions/${created.body.id}/publish`).set(...author.auth);
    expect(published.status).toBe(200);
    expect(published.body.is_published).toBe(true);
    expect(published.body.published).not.toBeNull();
    expect(published.body.language).toBe('en');
    expect((await system.api.put(`${API}/solutions/${created.body.id}/publish`).set(...author.auth)).status).toBe(409);

    const seen = await system.api.get(`${API}/solutions/${created.body.id}`).set(...other.auth);
    expect(seen.status).toBe(200);
    expect(seen.body).toHaveProperty('accepted_by_question_poser', null);
    const after = (await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body;
    expect(after.solution_count).toBe(1);
    expect(Date.parse(after.last_activity)).toBeGreaterThan(Date.parse(before.last_activity));

    const events = await contentEvents(system, 'content.solution.published.v1');
    const event = events.find((e) => e.data.solution.id === created.body.id);
    expect(event?.data.question).toMatchObject({ id: q, author_id: poser.user.id });
    expect(event?.data.solution.text).toBe('The answer is here');
  });

  test('delete (204) and restore (200, no body) keep solution_count right; only the author or an admin', async () => {
    const q = await publishedQuestion(system, poser.token);
    const id = await publishedSolution(system, author.token, q);
    expect((await system.api.delete(`${API}/solutions/${id}`).set(...other.auth)).status).toBe(403);
    const del = await system.api.delete(`${API}/solutions/${id}`).set(...author.auth);
    expect(del.status).toBe(204);
    expect((await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body.solution_count).toBe(0);
    expect((await system.api.get(`${API}/solutions/${id}`).set(...other.auth)).status).toBe(404);
    const own = await system.api.get(`${API}/solutions/${id}`).set(...author.auth);
    expect(own.body.is_deleted).toBe(true);
    expect((await system.api.delete(`${API}/solutions/${id}`).set(...author.auth)).status).toBe(404);

    expect((await system.api.put(`${API}/solutions/${id}/restore`).set(...other.auth)).status).toBe(404);
    const restored = await system.api.put(`${API}/solutions/${id}/restore`).set(...admin.auth);
    expect(restored.status).toBe(200);
    expect(restored.text).toBe('');
    expect((await system.api.get(`${API}/questions/${q}`).set(...poser.auth)).body.solution_count).toBe(1);
    expect((await system.api.put(`${API}/solutions/${id}/restore`).set(...admin.auth)).status).toBe(409);
    expect((await system.api.get(`${API}/solutions/999999`).set(...other.auth)).status).toBe(404);

    expect((await contentEvents(system, 'content.solution.deleted.v1')).some((e) => e.data.solution.id === id)).toBe(true);
    expect((await contentEvents(system, 'content.solution.restored.v1')).some((e) => e.data.solution.id === id)).toBe(true);
  });
});

describe('editing', () => {
  test('the author or a content admin may edit; others get 403 and nothing changes; followers and mentions are in the event', async () => {
    const q = await publishedQuestion(system, poser.token);
    await system.api.put(`${API}/questions/${q}/follow`).set(...other.auth);
    const id = await publishedSolution(system, author.token, q);
    const forbidden = await system.api
      .put(`${API}/solutions/${id}`)
      .set(...other.auth)
      .send({ description: '<p>hijacked</p>' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('Forbidden');
    expect((await system.api.get(`${API}/solutions/${id}`).set(...author.auth)).body.description).not.toContain('hijacked');

    // The users projection of the content service knows the mentioned user.
    await system.services.users.runtime.relay.flush();
    await system.services.content.consumers.users.caughtUp();
    const res = await system.api
      .put(`${API}/solutions/${id}`)
      .set(...author.auth)
      .send({
        description: `<p>Better: ask <span data-mention-user-id="${other.user.id}">@Other</span> <a href="javascript:alert(1)" onclick="x()">here</a></p>`,
      });
    expect(res.status).toBe(200);
    expect(res.body.description).not.toMatch(/javascript:|onclick/);
    expect(res.body.description).toContain(`data-mention-user-id="${other.user.id}"`);
    const byAdmin = await system.api
      .put(`${API}/solutions/${id}`)
      .set(...admin.auth)
      .send({ description: '<p>Edited by the admin, with care</p>' });
    expect(byAdmin.status).toBe(200);

    const events = (await contentEvents(system, 'content.solution.updated.v1')).filter((e) => e.data.solution.id === id);
    expect(events).toHaveLength(2);
    expect(events[0].data.question.followers).toContain(other.user.id);
    expect(events[0].data.mentions).toEqual([other.user.id]);
    expect(events[1].actor_id).toBe(admin.user.id);
    expect(
      (
        await system.api
          .put(`${API}/solutions/999999`)
          .set(...author.auth)
          .send({ description: 'x' })
      ).status,
    ).toBe(404);
  });
});

describe('rating, accepting, upvoting', () => {
  test('ratings 1..5 average; 0 and 6 are 400 and change nothing; authors cannot rate themselves', async () => {
    const q = await publishedQuestion(system, poser.token);
    const id = await publishedSolution(system, author.token, q);
    for (const bad of [0, 6, 2.5, '3']) {
      const res = await system.api
        .put(`${API}/solutions/${id}/rating`)
        .set(...other.auth)
        .send({ rating: bad });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ValidationError');
    }
    expect((await system.api.get(`${API}/solutions/${id}`).set(...other.auth)).body.rating_count).toBe(0);
    expect(
      (
        await system.api
          .put(`${API}/solutions/${id}/rating`)
          .set(...author.auth)
          .send({ rating: 5 })
      ).status,
    ).toBe(403);

    const first = await system.api
      .put(`${API}/solutions/${id}/rating`)
      .set(...other.auth)
      .send({ rating: 4 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ rating: 4, rating_count: 1 });
    const second = await system.api
      .put(`${API}/solutions/${id}/rating`)
      .set(...poser.auth)
      .send({ rating: 1 });
    expect(second.body).toMatchObject({ rating: 2.5, rating_count: 2 });
    const changed = await system.api
      .put(`${API}/solutions/${id}/rating`)
      .set(...other.auth)
      .send({ rating: 2 });
    expect(changed.body).toMatchObject({ rating: 1.5, rating_count: 2 });

    const draft = await system.api
      .post(`${API}/questions/${q}/solutions`)
      .set(...other.auth)
      .send({ description: '<p>draft answer</p>' });
    expect(
      (
        await system.api
          .put(`${API}/solutions/${draft.body.id}/rating`)
          .set(...other.auth)
          .send({ rating: 3 })
      ).status,
    ).toBe(409);

    const events = (await contentEvents(system, 'content.solution.rated.v1')).filter((e) => e.data.solution.id === id);
    expect(events.map((e) => e.data.by_question_poser)).toEqual([false, true, false]);
    expect(events[2].data.raters.sort()).toEqual([other.user.id, poser.user.id].sort());
  });

  test('only the question poser accepts; acceptance moves to the latest accepted solution', async () => {
    const q = await publishedQuestion(system, poser.token);
    const a = await publishedSolution(system, author.token, q);
    const b = await publishedSolution(system, other.token, q);
    expect((await system.api.put(`${API}/solutions/${a}/accept`).set(...author.auth)).status).toBe(403);
    const accepted = await system.api.put(`${API}/solutions/${a}/accept`).set(...poser.auth);
    expect(accepted.status).toBe(200);
    expect(accepted.body.accepted_by_question_poser).toMatch(/Z$/);
    await system.api.put(`${API}/solutions/${b}/accept`).set(...poser.auth);
    expect((await system.api.get(`${API}/solutions/${a}`).set(...poser.auth)).body.accepted_by_question_poser).toBeNull();
    expect((await system.api.get(`${API}/solutions/${b}`).set(...poser.auth)).body.accepted_by_question_poser).not.toBeNull();
    expect((await system.api.put(`${API}/solutions/999999/accept`).set(...poser.auth)).status).toBe(404);
  });

  test('upvote and its removal are idempotent; no self-upvote', async () => {
    const q = await publishedQuestion(system, poser.token);
    const id = await publishedSolution(system, author.token, q);
    expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...author.auth)).status).toBe(403);
    expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...other.auth)).body.upvote_count).toBe(1);
    expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...other.auth)).body.upvote_count).toBe(1);
    expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...poser.auth)).body.upvote_count).toBe(2);
    expect((await system.api.delete(`${API}/solutions/${id}/upvote`).set(...other.auth)).body.upvote_count).toBe(1);
    expect((await system.api.delete(`${API}/solutions/${id}/upvote`).set(...other.auth)).body.upvote_count).toBe(1);
    expect((await contentEvents(system, 'content.solution.upvoted.v1')).filter((e) => e.data.solution.id === id)).toHaveLength(2);
    expect((await contentEvents(system, 'content.solution.upvote-removed.v1')).filter((e) => e.data.solution.id === id)).toHaveLength(1);
  });

  test('GET /questions/:id/upvotes/mine: the live solutions of the question the caller upvoted', async () => {
    const q = await publishedQuestion(system, poser.token);
    const [a, b, gone] = [
      await publishedSolution(system, author.token, q, '<p>first</p>'),
      await publishedSolution(system, other.token, q, '<p>second</p>'),
      await publishedSolution(system, other.token, await publishedQuestion(system, poser.token), '<p>elsewhere</p>'),
    ];
    const mine = async (who: [string, string], question = q) => system.api.get(`${API}/questions/${question}/upvotes/mine`).set(...who);
    expect((await mine(poser.auth)).body).toEqual({ solution_ids: [] });
    for (const id of [b, a, gone]) expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...poser.auth)).status).toBe(200);
    expect((await mine(poser.auth)).body).toEqual({ solution_ids: [a, b] });
    // Another person's upvotes are not the caller's; a deleted solution drops out.
    expect((await mine(other.auth)).body).toEqual({ solution_ids: [] });
    expect((await system.api.delete(`${API}/solutions/${b}`).set(...other.auth)).status).toBe(204);
    expect((await mine(poser.auth)).body).toEqual({ solution_ids: [a] });
    const missing = await mine(poser.auth, 999999);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NotFound');
    expect((await system.api.get(`${API}/questions/${q}/upvotes/mine`)).status).toBe(401);
  });
});

describe('the complete question', () => {
  test('GET /questions/:id/complete has the question, solutions by rating, comments and attachments', async () => {
    const q = await publishedQuestion(system, poser.token);
    const low = await publishedSolution(system, author.token, q, '<p>A first answer</p>');
    const high = await publishedSolution(system, other.token, q, '<p>A better answer</p>');
    await system.api
      .put(`${API}/solutions/${low}/rating`)
      .set(...poser.auth)
      .send({ rating: 2 });
    await system.api
      .put(`${API}/solutions/${high}/rating`)
      .set(...poser.auth)
      .send({ rating: 5 });
    await system.api
      .post(`${API}/questions/${q}/solutions`)
      .set(...admin.auth)
      .send({ description: '<p>unpublished</p>' });
    await system.api
      .post(`${API}/questions/${q}/comments`)
      .set(...other.auth)
      .send({ description: '<p>Which version?</p>' });

    const res = await system.api.get(`${API}/questions/${q}/complete`).set(...other.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: q, is_published: true, solution_count: 2 });
    expect(res.body.solutions.map((s: { id: number }) => s.id)).toEqual([high, low]);
    expect(res.body.comments).toHaveLength(1);
    expect(res.body.attachments).toEqual([]);
    expect((await system.api.get(`${API}/questions/999999/complete`).set(...other.auth)).status).toBe(404);
  });
});

test('every solution endpoint needs a token', async () => {
  expect((await system.api.get(`${API}/solutions/1`)).status).toBe(401);
  expect((await system.api.post(`${API}/questions/${questionId}/solutions`).send({ description: 'x' })).status).toBe(401);
});
