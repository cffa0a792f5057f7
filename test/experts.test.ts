import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
const api = () => system.api;
let poser: U;
let hopsExpert: U;
let hopsNovice: U;
let yeastExpert: U;
let recommended: U;
let leaver: U;
let appleExpert: U;
const ids: Record<string, number> = {};

const question = async (user: U, body: Record<string, unknown>, publish = true) =>
  (await newQuestion(system, user.token, body, { publish })).id;

const solution = (user: U, questionId: number, description: string) => publishedSolution(system, user.token, questionId, description);

const rate = async (user: U, solutionId: number, rating: number) =>
  expect(
    (
      await api()
        .put(`${API}/solutions/${solutionId}/rating`)
        .set(...user.auth)
        .send({ rating })
    ).status,
  ).toBe(200);

const accept = async (user: U, solutionId: number) =>
  expect(
    (
      await api()
        .put(`${API}/solutions/${solutionId}/accept`)
        .set(...user.auth)
    ).status,
  ).toBe(200);

type Found = {
  tags: string[];
  experts: Array<{
    user: { id: number; email: string };
    details: {
      solution_count: number;
      average_rating: number | null;
      recommendation_count: number;
      expert_tags: Array<{ label: string }>;
      reasons: {
        tags: Array<{ label: string; weight: number }>;
        similar_questions: Array<{ id: number; title: string; similarity: number }>;
      };
    };
  }>;
};
const experts = async (query: string, user: U = poser, limit?: number) => {
  const res = await api()
    .post(`${API}/search/experts`)
    .set(...user.auth)
    .send(limit === undefined ? { query } : { query, limit });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Found;
};
const expertIds = (found: Found) => found.experts.map((e) => e.user.id);

async function notificationTypes(user: U, questionId: number) {
  const res = await api()
    .get(`${API}/notifications?limit=100`)
    .set(...user.auth);
  expect(res.status).toBe(200);
  return (res.body.items as Array<{ type: string; question_id: number }>).filter((n) => n.question_id === questionId).map((n) => n.type);
}

beforeAll(async () => {
  system = await startSystem({ ROUTING_EXPERTS: '3' });
  poser = await system.createUser({ firstname: 'Poser' });
  hopsExpert = await system.createUser({ firstname: 'Hops', lastname: 'Expert' });
  hopsNovice = await system.createUser({ firstname: 'Hops', lastname: 'Novice' });
  yeastExpert = await system.createUser({ firstname: 'Yeast', lastname: 'Expert' });
  recommended = await system.createUser({ firstname: 'Recommended' });
  leaver = await system.createUser({ firstname: 'Leaver' });
  appleExpert = await system.createUser({ firstname: 'Apple', lastname: 'Expert' });

  // The poser asks about hops three times; the hops expert answers every one (accepted, rated 5),
  // the novice once (rated 2); the leaver answers too and is deleted later.
  for (const [n, title] of [
    'When should I add hops to the boil?',
    'Dry hopping with whole hops or pellets?',
    'How much hops for a pale ale?',
  ].entries()) {
    const q = await question(poser, { title, description: '<p>hops bitterness aroma in the boil</p>', tags: ['hops'] });
    const best = await solution(hopsExpert, q, '<p>Add bittering hops early and aroma hops at flameout.</p>');
    await rate(poser, best, 5);
    await accept(poser, best);
    if (n === 0) await rate(poser, await solution(hopsNovice, q, '<p>Any time works for hops.</p>'), 2);
    if (n === 1) await solution(leaver, q, '<p>Pellets of hops are easier.</p>');
    ids[`hops${n}`] = q;
  }
  const yeast = await question(poser, {
    title: 'Which yeast strain ferments lagers best?',
    description: '<p>My lager yeast gives sulfur at cold fermentation.</p>',
    tags: ['yeast'],
  });
  await solution(yeastExpert, yeast, '<p>Use a clean lager yeast and a diacetyl rest.</p>');
  ids.yeast = yeast;
  // A question forwarded to the recommended user, then deleted: the recommendation still counts.
  const ipa = await question(poser, {
    title: 'What makes an IPA hoppy and bitter?',
    description: '<p>ipa hops bitterness</p>',
    tags: ['ipa', 'hops'],
  });
  expect(
    (
      await api()
        .post(`${API}/questions/${ipa}/forward`)
        .set(...hopsNovice.auth)
        .send({ recipient: recommended.user.id })
    ).status,
  ).toBe(200);
  expect(
    (
      await api()
        .delete(`${API}/questions/${ipa}`)
        .set(...poser.auth)
    ).status,
  ).toBe(204);
  // Cider is linked to apples; only the apple expert knows apples.
  const apples = await question(poser, {
    title: 'Which apples for a dry cider?',
    description: '<p>apples tannin acidity</p>',
    tags: ['apples'],
  });
  await solution(appleExpert, apples, '<p>Bittersweet apples give tannin.</p>');
  await question(poser, { title: 'Draft about cider', description: '<p>cider</p>', tags: ['cider'] }, false);
  expect(
    (
      await api()
        .put(`${API}/tag-labels/cider/links`)
        .set(...bearer(system.adminToken))
        .send(['apples'])
    ).status,
  ).toBe(200);
  expect(
    (
      await api()
        .delete(`${API}/users/${leaver.user.id}`)
        .set(...bearer(system.adminToken))
    ).status,
  ).toBe(204);
  await system.searchCaughtUp();
}, 120_000);
afterAll(() => system?.stop());

describe('POST /search/experts', () => {
  test('finds the tags of the text and ranks who answered them best; details count solutions, ratings, recommendations', async () => {
    const found = await experts('How late can I add hops to the boil for aroma?');
    expect(found.tags).toContain('hops');
    expect(found.tags).not.toContain('yeast');
    expect(expertIds(found)[0]).toBe(hopsExpert.user.id);
    expect(expertIds(found)).toContain(hopsNovice.user.id);
    expect(expertIds(found).indexOf(hopsNovice.user.id)).toBeGreaterThan(0);
    const best = found.experts[0]!;
    expect(best.details).toMatchObject({ solution_count: 3, average_rating: 5, recommendation_count: 0, expert_tags: [{ label: 'hops' }] });
    // Why this person (an addition to the interface's details): the tags with their weight, and
    // up to three similar questions they answered, most similar first.
    expect(best.details.reasons.tags).toEqual([{ label: 'hops', weight: 1 }]);
    const similar = best.details.reasons.similar_questions;
    expect(similar.map((q) => q.id).sort()).toEqual([ids.hops0, ids.hops1, ids.hops2].sort());
    expect(similar[0]).toEqual({ id: ids.hops0, title: 'When should I add hops to the boil?', similarity: expect.any(Number) });
    expect(similar.map((q) => q.similarity)).toEqual([...similar.map((q) => q.similarity)].sort((a, b) => b - a));
    expect(found.experts.find((e) => e.user.id === hopsNovice.user.id)!.details).toMatchObject({ solution_count: 1, average_rating: 2 });
    // Askers are not experts; deleted users are not either.
    expect(expertIds(found)).not.toContain(poser.user.id);
    expect(expertIds(found)).not.toContain(leaver.user.id);
  });

  test('recommendations count, also for questions deleted since', async () => {
    const found = await experts('Why is my IPA so bitter? Too many hops?');
    expect(found.tags).toEqual(expect.arrayContaining(['ipa', 'hops']));
    const r = found.experts.find((e) => e.user.id === recommended.user.id);
    expect(r?.details).toMatchObject({ solution_count: 0, average_rating: null, recommendation_count: 1 });
    expect(r!.details.expert_tags.map((t) => t.label).sort()).toEqual(['hops', 'ipa']);
  });

  test('too few experts on a tag: linked tags widen the pool and say so', async () => {
    const found = await experts('My cider tastes thin, which cider method helps?');
    expect(found.tags[0]).toBe('cider');
    expect(found.tags).toContain('apples');
    expect(expertIds(found)).toEqual([appleExpert.user.id]);
    expect(found.experts[0]!.details.expert_tags).toEqual([{ label: 'apples' }]);
  });

  test('no fitting tag: both lists empty; limits and bad input', async () => {
    expect(await experts('quantum chromodynamics on a lattice')).toEqual({ tags: [], experts: [] });
    expect(await experts('the of and it is')).toEqual({ tags: [], experts: [] });
    expect((await experts('hops in the boil', poser, 1)).experts).toHaveLength(1);
    expect((await experts('hops in the boil', poser, 0)).experts).toHaveLength(0);
    for (const body of [{}, { query: '' }, { query: '   ' }, { query: 'x'.repeat(1001) }, { query: 'hops', limit: -1 }, { query: 42 }]) {
      const res = await api()
        .post(`${API}/search/experts`)
        .set(...poser.auth)
        .send(body);
      expect([JSON.stringify(body).slice(0, 40), res.status, res.body.code]).toEqual([
        JSON.stringify(body).slice(0, 40),
        400,
        'ValidationError',
      ]);
    }
    const longest = await api()
      .post(`${API}/search/experts`)
      .set(...poser.auth)
      .send({ query: `hops ${'a'.repeat(995)}` });
    expect(longest.status).toBe(200);
  });
});

test('the evidence of answered_meaning: the live questions each person answered, the latest answered first', async () => {
  const people = [hopsExpert, hopsNovice, yeastExpert, recommended].map((u) => u.user.id);
  const answered = await system.services.search.backend.evidence([]).answered(people);
  expect(people.map((id) => answered.get(id))).toEqual([[ids.hops2, ids.hops1, ids.hops0], [ids.hops0], [ids.yeast], []]);
});

describe('GET /questions/:id/experts', () => {
  test('the experts on a published question, never its poser; 404 for missing and unpublished questions', async () => {
    const res = await api()
      .get(`${API}/questions/${ids.hops0}/experts`)
      .set(...yeastExpert.auth);
    expect(res.status).toBe(200);
    expect(res.body.items[0].user.id).toBe(hopsExpert.user.id);
    expect(res.body.total).toBe(res.body.items.length);
    expect(res.body.items.map((i: { user: { id: number } }) => i.user.id)).not.toContain(poser.user.id);
    expect(res.body.items[0].user.email).toMatch(/@/);
    const draft = await question(poser, { title: 'An unpublished hops question', tags: ['hops'] }, false);
    for (const id of [draft, 999999])
      expect(
        (
          await api()
            .get(`${API}/questions/${id}/experts`)
            .set(...poser.auth)
        ).status,
      ).toBe(404);
  });
});

describe('routing', () => {
  test('publishing sends the question to its experts (new_question), once, with an experts.found event', async () => {
    const q = await question(poser, {
      title: 'Hops creep after late hopping?',
      description: '<p>hops in the fermenter</p>',
      tags: ['hops'],
    });
    await system.routed();
    const routings = await system.services.search.runtime.db.selectFrom('routings').selectAll().where('question_id', '=', q).execute();
    expect(routings).toHaveLength(1);
    const sent = routings[0]!.experts.map((e) => e.user_id);
    expect(sent[0]).toBe(hopsExpert.user.id);
    expect(sent).not.toContain(poser.user.id);
    expect(routings[0]!).toMatchObject({ reason: 'published', tags: ['hops'] });
    // The decision is an event other systems can follow: the users and their scores.
    const { bus } = system.services.search.runtime;
    const stream = bus.streamName('search');
    const { state } = await bus.jsm.streams.info(stream);
    const found = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const envelope = (await bus.jsm.streams.getMessage(stream, { seq }))!.json<{ subject: string; data: any }>();
      if (envelope.subject === 'search.experts.found.v1' && envelope.data.question.id === q) found.push(envelope.data);
    }
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ reason: 'published', routing_id: routings[0]!.id, tags: ['hops'], requested_by: null });
    expect(found[0].experts.map((e: { user_id: number }) => e.user_id)).toEqual(sent);
    expect(found[0].experts[0]).toEqual({ user_id: hopsExpert.user.id, score: expect.any(Number), expert_tags: ['hops'] });
    expect(await notificationTypes(hopsExpert, q)).toEqual(['new_question']);
    expect(await notificationTypes(yeastExpert, q)).toEqual([]);
    expect(await notificationTypes(poser, q)).toEqual([]);
    // The poser stays anonymous to the experts.
    const res = await api()
      .get(`${API}/notifications?limit=100`)
      .set(...hopsExpert.auth);
    const note = res.body.items.find((n: { question_id: number; type: string }) => n.question_id === q && n.type === 'new_question');
    expect(JSON.stringify(note)).not.toContain(String(poser.user.email));
  });

  test('the publish answer counts the experts it was sent to', async () => {
    const d = await api()
      .post(`${API}/questions`)
      .set(...poser.auth)
      .send({ title: 'Bittering hops for a stout?', description: '<p>hops bitterness</p>', tags: ['hops'] });
    const res = await api()
      .put(`${API}/questions/${d.body.id}/publish`)
      .set(...poser.auth);
    expect(res.status).toBe(200);
    await system.routed();
    const [routing] = await system.services.search.runtime.db
      .selectFrom('routings')
      .selectAll()
      .where('question_id', '=', d.body.id)
      .execute();
    expect(res.body).toEqual({ number_of_experts: routing!.experts.length });
    expect(res.body.number_of_experts).toBeGreaterThanOrEqual(2);
  });

  test('a validation request goes to experts the question was not sent to before (validation_new_expert)', async () => {
    const q = await question(poser, { title: 'Wild yeast in a hops heavy beer?', description: '<p>hops and yeast</p>', tags: ['hops'] });
    await system.routed();
    const [first] = await system.services.search.runtime.db.selectFrom('routings').selectAll().where('question_id', '=', q).execute();
    const before = first!.experts.map((e) => e.user_id);
    // A new expert on hops appears after the question was routed.
    const newcomer = await system.createUser({ firstname: 'New', lastname: 'Comer' });
    const other = await question(poser, { title: 'Hops storage in the freezer?', description: '<p>hops storage</p>', tags: ['hops'] });
    for (let i = 0; i < 3; i++) await accept(poser, await solution(newcomer, other, `<p>Freeze the hops, vacuum sealed (${i}).</p>`));
    await system.searchCaughtUp();
    expect(
      (
        await api()
          .put(`${API}/questions/${q}/request-validation`)
          .set(...yeastExpert.auth)
      ).status,
    ).toBe(200);
    await system.routed();
    const routings = await system.services.search.runtime.db
      .selectFrom('routings')
      .selectAll()
      .where('question_id', '=', q)
      .orderBy('id')
      .execute();
    expect(routings.map((r) => r.reason)).toEqual(['published', 'validation']);
    const again = routings[1]!.experts.map((e) => e.user_id);
    expect(again).toContain(newcomer.user.id);
    expect(again.filter((id) => before.includes(id))).toEqual([]);
    expect(await notificationTypes(newcomer, q)).toEqual(['validation_new_expert']);
    expect(await notificationTypes(hopsExpert, q)).toEqual(['new_question']);
  });

  test('a question of a closed knowledge space goes to its members only', async () => {
    const space = await api()
      .post(`${API}/knowledge-spaces`)
      .set(...bearer(system.adminToken))
      .send({ name: 'Hops lab', is_closed: true });
    await api()
      .put(`${API}/knowledge-spaces/${space.body.id}/members`)
      .set(...bearer(system.adminToken))
      .send({ user_ids: [poser.user.id, hopsNovice.user.id] })
      .expect(200);
    await system.searchCaughtUp();
    const q = await question(poser, {
      title: 'Secret hops blend for the lab?',
      description: '<p>hops blend</p>',
      tags: ['hops'],
      knowledge_space: space.body.id,
    });
    await system.routed();
    const [routing] = await system.services.search.runtime.db.selectFrom('routings').selectAll().where('question_id', '=', q).execute();
    expect(routing!.experts.map((e) => e.user_id)).toEqual([hopsNovice.user.id]);
  });

  test('people who answer what they are sent are noted as such: the routing is marked answered', async () => {
    const q = await question(poser, { title: 'Hops oil and late additions?', description: '<p>hops oil</p>', tags: ['hops'] });
    await system.routed();
    const db = system.services.search.runtime.db;
    const sent = await db.selectFrom('routed_experts').selectAll().where('question_id', '=', q).execute();
    expect(sent.map((r) => r.user_id)).toContain(hopsExpert.user.id);
    expect(sent.every((r) => r.answered_at === null)).toBe(true);
    await solution(hopsExpert, q, '<p>Whirlpool hops keep their oil.</p>');
    await system.routed();
    const after = await db.selectFrom('routed_experts').selectAll().where('question_id', '=', q).execute();
    expect(after.filter((r) => r.answered_at !== null).map((r) => r.user_id)).toEqual([hopsExpert.user.id]);
  });

  test('a person sent routings_per_expert_per_week questions in the last 7 days is passed over for the next best', async () => {
    const settings = (body: Record<string, unknown>) =>
      api()
        .put(`${API}/settings`)
        .set(...bearer(system.adminToken))
        .send(body)
        .expect(200);
    const db = system.services.search.runtime.db;
    const weekly = async (user: number) =>
      (
        await db
          .selectFrom('routed_experts')
          .select('user_id')
          .where('user_id', '=', user)
          .where('routed_at', '>', new Date(Date.now() - 7 * 86_400_000))
          .execute()
      ).length;
    const cap = (await weekly(hopsExpert.user.id)) + 1;
    await settings({ routings_per_expert_per_week: cap });
    await system.searchCaughtUp();
    try {
      const first = await question(poser, { title: 'Hop stand temperature for IPA?', description: '<p>hops stand</p>', tags: ['hops'] });
      await system.routed();
      const sentTo = async (q: number) =>
        (await db.selectFrom('routings').select('experts').where('question_id', '=', q).executeTakeFirstOrThrow()).experts.map(
          (e) => e.user_id,
        );
      expect((await sentTo(first))[0]).toBe(hopsExpert.user.id);
      const full = new Set<number>();
      for (const user of [hopsExpert, hopsNovice, yeastExpert, recommended, appleExpert])
        if ((await weekly(user.user.id)) >= cap) full.add(user.user.id);
      expect(full).toContain(hopsExpert.user.id);
      const second = await question(poser, { title: 'Hop creep after dry hopping?', description: '<p>hops creep</p>', tags: ['hops'] });
      await system.routed();
      const next = await sentTo(second);
      // The next best take the places of those at the cap.
      expect(next.length).toBeGreaterThan(0);
      expect(next.filter((u) => full.has(u))).toEqual([]);
    } finally {
      await settings({ routings_per_expert_per_week: 10 });
    }
  });
});
