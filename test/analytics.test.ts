import { call } from '@kn/bus';
import { importOperations } from '@kn/contracts';
import { startAnalyticsFeed } from '../services/analytics/src/jobs/feed.ts';
import { API, closedSpaceQuestion, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

const HOUR = 3600;
const DAY = 24 * HOUR;
/** A Monday: the first week of the test network. */
const T0 = Date.parse('2026-01-05T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let system: System;
let manager: Awaited<ReturnType<System['createUser']>>;
let askers: Array<Awaited<ReturnType<System['createUser']>>>;

/**
 * The test network: seven questions at known times, brought in by the importer (which keeps the
 * original dates) — asked, first solution and acceptance offsets in seconds after T0.
 */
const network = [
  { asker: 0, asked: 0, solved: 2 * HOUR, accepted: 5 * HOUR, tags: ['hops', 'malt'] },
  { asker: 1, asked: 1 * HOUR, solved: 11 * HOUR, accepted: 31 * HOUR, tags: ['hops', 'malt'] },
  { asker: 2, asked: 2 * HOUR, solved: 2 * HOUR + 3 * DAY, accepted: null, tags: ['hops', 'malt'] },
  { asker: 3, asked: 3 * HOUR, solved: 3 * HOUR + 10 * DAY, accepted: 3 * HOUR + 12 * DAY, tags: ['hops'] },
  { asker: 4, asked: 4 * HOUR, solved: null, accepted: null, tags: ['hops'] },
  { asker: 5, asked: 5 * HOUR, solved: null, accepted: null, tags: ['hops'] },
  { asker: 0, asked: 7 * DAY, solved: 7 * DAY + HOUR, accepted: null, tags: ['hops'] },
];

const flow = (token: string, query: string) => system.api.get(`${API}/analytics/flow?${query}`).set(...bearer(token));

beforeAll(async () => {
  // The clock moves months ahead for validity periods: tokens must outlive that.
  system = await startSystem({ TOKEN_TTL: String(5 * 365 * DAY), ANALYTICS_CACHE_MS: '0' });
  manager = await system.createUser({}, ['user', 'manager']);
  askers = [];
  for (let i = 0; i < 6; i++) askers.push(await system.createUser());
  const expert = await system.createUser();
  await call(system.services.content.runtime.bus, 'importQuestions', importOperations.importQuestions, {
    actor: null,
    params: undefined,
    query: undefined,
    requestId: 'analytics-test',
    url: '',
    body: {
      questions: network.map((q, i) => ({
        external_id: `analytics:q${i}`,
        author_id: askers[q.asker]!.user.id,
        title: `Imported question number ${i} about brewing`,
        description: '<p>How?</p>',
        language: 'en',
        tags: q.tags,
        created: at(q.asked),
        view_count: 0,
        upvote_count: 0,
        comments: [],
        solutions:
          q.solved === null
            ? []
            : [
                {
                  external_id: `analytics:s${i}`,
                  author_id: expert.user.id,
                  description: '<p>Like this.</p>',
                  created: at(q.solved),
                  upvote_count: 0,
                  downvote_count: 0,
                  accepted: q.accepted === null ? null : at(q.accepted),
                },
              ],
      })),
    },
  });
  await system.analyticsCaughtUp();
});

afterAll(async () => {
  await system?.stop();
});

const WEEKS = 'from=2026-01-05&to=2026-01-19&granularity=week';

test('the figures equal what was done: counts, medians and percentiles per week', async () => {
  const res = await flow(system.adminToken, WEEKS);
  expect(res.status).toBe(200);
  expect(res.body.rows).toEqual([
    {
      period: '2026-01-05',
      group: null,
      people: 6,
      suppressed: false,
      asked: 6,
      answered: 4,
      accepted: 3,
      // First solutions after 2 h, 10 h, 3 days and 10 days: nearest-rank median is 10 h, p90 10 days.
      first_solution_p50_s: 10 * HOUR,
      first_solution_p90_s: 10 * DAY,
      // Acceptances after 5 h, 30 h and 12 days.
      acceptance_p50_s: 30 * HOUR,
      acceptance_p90_s: 12 * DAY,
      answered_within_day: 2 / 6,
      answered_within_week: 3 / 6,
    },
    {
      period: '2026-01-12',
      group: null,
      people: 1,
      suppressed: false,
      asked: 1,
      answered: 1,
      accepted: 0,
      first_solution_p50_s: HOUR,
      first_solution_p90_s: HOUR,
      acceptance_p50_s: null,
      acceptance_p90_s: null,
      answered_within_day: 1,
      answered_within_week: 1,
    },
  ]);
  // The backlog is the two questions without a solution, aged as of the report's time.
  const asOf = Date.parse(res.body.as_of);
  const age = (asked: number) => (asOf - (T0 + asked * 1000)) / 1000;
  expect(res.body.backlog.unanswered).toBe(2);
  expect(res.body.backlog.age_p50_s).toBeCloseTo(age(5 * HOUR), 3);
  expect(res.body.backlog.age_p90_s).toBeCloseTo(age(4 * HOUR), 3);
  expect(res.body.backlog.oldest_s).toBeCloseTo(age(4 * HOUR), 3);

  const days = await flow(system.adminToken, 'from=2026-01-05&to=2026-01-06&granularity=day');
  expect(days.body.rows).toMatchObject([{ period: '2026-01-05', asked: 6, answered: 4 }]);
  const months = await flow(system.adminToken, 'from=2026-01-01&to=2026-02-01&granularity=month');
  expect(months.body.rows).toMatchObject([{ period: '2026-01-01', asked: 7, answered: 5, accepted: 3, first_solution_p50_s: 10 * HOUR }]);
});

test('per tag: a question counts under each of its tags; a value filters one', async () => {
  const res = await flow(system.adminToken, `${WEEKS}&dimension=tag`);
  expect(res.status).toBe(200);
  expect(res.body.rows.map((r: any) => [r.period, r.group, r.asked, r.answered, r.accepted])).toEqual([
    ['2026-01-05', 'hops', 6, 4, 3],
    ['2026-01-05', 'malt', 3, 3, 2],
    ['2026-01-12', 'hops', 1, 1, 0],
  ]);
  const malt = await flow(system.adminToken, `${WEEKS}&dimension=tag&value=MALT`);
  expect(malt.body.rows).toMatchObject([{ group: 'malt', asked: 3, first_solution_p50_s: 10 * HOUR }]);
  expect(malt.body.backlog.unanswered).toBe(0);
});

test('a manager sees no figure over fewer than five people; an administrator sees all', async () => {
  const res = await flow(manager.token, `${WEEKS}&dimension=tag`);
  expect(res.status).toBe(200);
  const byKey = Object.fromEntries(res.body.rows.map((r: any) => [`${r.period} ${r.group}`, r]));
  expect(byKey['2026-01-05 hops']).toMatchObject({ suppressed: false, people: 6, asked: 6 });
  for (const key of ['2026-01-05 malt', '2026-01-12 hops'])
    expect(byKey[key]).toEqual(expect.objectContaining({ suppressed: true, people: null, asked: null, first_solution_p50_s: null }));
  // The backlog of two askers would name them.
  expect(res.body.backlog).toMatchObject({ suppressed: true, unanswered: null });
  // Someone who is neither a manager nor an administrator sees no figures at all.
  const plain = await flow(askers[0]!.token, WEEKS);
  expect(plain.status).toBe(403);
  expect(plain.body.code).toBe('Forbidden');
});

test('bad input is a 400 with the reason, never a 5xx', async () => {
  const cases: Array<[string, RegExp]> = [
    [`${WEEKS}&dimension=colour`, /dimension/],
    ['from=2020-01-01&to=2025-06-01&granularity=day', /at most 1830 days at day granularity/],
    ['from=2026-02-01&to=2026-01-01', /to must be after from/],
    ['from=yesterday&to=2026-01-01', /date/],
    [`${WEEKS}&granularity=year`, /granularity/],
  ];
  for (const [query, reason] of cases) {
    const res = await flow(system.adminToken, query);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ValidationError');
    expect(JSON.stringify(res.body)).toMatch(reason);
  }
  // Five years at week granularity are fine.
  expect((await flow(system.adminToken, 'from=2020-01-01&to=2025-06-01&granularity=week')).status).toBe(200);
  const health = await system.api.get(`${API}/analytics/health?within_days=0`).set(...bearer(system.adminToken));
  expect(health.status).toBe(400);
});

test('a rebuild from the streams gives the same figures', async () => {
  const before = await flow(system.adminToken, `${WEEKS}&dimension=tag`);
  const rebuilt = await system.api.post(`${API}/analytics/rebuild`).set(...bearer(system.adminToken));
  expect(rebuilt.status).toBe(202);
  const emptied = await system.services.analytics.runtime.db.selectFrom('questions').select('id').execute();
  expect(emptied.length).toBeLessThan(network.length);
  await system.analyticsCaughtUp();
  const after = await flow(system.adminToken, `${WEEKS}&dimension=tag`);
  expect(after.body.rows).toEqual(before.body.rows);
  expect(after.body.backlog.unanswered).toBe(before.body.backlog.unanswered);
  // A manager may not rebuild.
  expect((await system.api.post(`${API}/analytics/rebuild`).set(...bearer(manager.token))).status).toBe(403);
});

test('rebuilds at once, beside a second instance that feeds the same figures, all succeed', async () => {
  const before = await flow(system.adminToken, `${WEEKS}&dimension=tag`);
  const { bus, db, logger } = system.services.analytics.runtime;
  // A second instance reads the same streams into the same tables (operators scale analytics out).
  const second = await startAnalyticsFeed({ bus, db, batch: 2, logger });
  try {
    const rebuild = () => system.api.post(`${API}/analytics/rebuild`).set(...bearer(system.adminToken));
    const answers = await Promise.all([rebuild(), rebuild(), second.rebuild().then(() => ({ status: 202 }))]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    await system.analyticsCaughtUp();
    await second.caughtUp();
  } finally {
    await second.stop();
  }
  const after = await flow(system.adminToken, `${WEEKS}&dimension=tag`);
  expect(after.body.rows).toEqual(before.body.rows);
});

describe('content health and the review queue', () => {
  let author: Awaited<ReturnType<System['createUser']>>;
  let other: Awaited<ReturnType<System['createUser']>>;
  let expiring: number;
  let expired: number;
  let question: number;

  beforeAll(async () => {
    author = await system.createUser();
    other = await system.createUser();
    question = (await newQuestion(system, other.token, { title: 'Which yeast keeps longest?', tags: ['yeast'] })).id;
    expiring = await publishedSolution(system, author.token, question, '<p>Dry yeast, about three months.</p>');
    const second = (await newQuestion(system, other.token, { title: 'Which malt keeps longest?', tags: ['malt'] })).id;
    expired = await publishedSolution(system, author.token, second, '<p>Whole grain malt.</p>');
    for (const [id, validity] of [
      [expiring, 'months_three'],
      [expired, 'months_three'],
    ] as const) {
      const res = await system.api
        .post(`${API}/solutions/${id}/validate`)
        .set(...author.auth)
        .send({ validity });
      expect(res.status).toBe(200);
    }
    await system.analyticsCaughtUp();
  });

  const health = (token: string, query = 'within_days=30&after_days=14') =>
    system.api.get(`${API}/analytics/health?${query}`).set(...bearer(token));
  const queue = (token: string, query = '') => system.api.get(`${API}/analytics/health/queue?${query}`).set(...bearer(token));

  test('validity ends move through expiring and expired as the clock moves', async () => {
    const now = await health(system.adminToken);
    expect(now.body).toMatchObject({ expiring: 0, expired: 0 });
    // Three months of validity: 70 days on, they end within 30 days.
    system.clock.advance(70 * DAY * 1000);
    const later = await health(system.adminToken);
    expect(later.body).toMatchObject({ expiring: 2, expired: 0 });
    // The imported questions without an acceptance have waited far longer than 14 days.
    expect(later.body.unaccepted).toBeGreaterThanOrEqual(4);
    const mine = await queue(author.token, 'kind=expiring');
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((i: any) => i.solution_id).sort()).toEqual([expiring, expired].sort());
    expect(mine.body.items[0]).toMatchObject({ kind: 'expiring', responsible_id: author.user.id });
    // Somebody else's queue holds none of them.
    expect((await queue(other.token, 'kind=expiring')).body.total).toBe(0);
    // 95 days on, both have ended.
    system.clock.advance(25 * DAY * 1000);
    expect((await health(system.adminToken)).body).toMatchObject({ expiring: 0, expired: 2 });
    expect((await queue(author.token, 'kind=expired')).body.total).toBe(2);
  });

  test('verify and obsolete are the author’s or an administrator’s only', async () => {
    const verify = (token: string, id: number) =>
      system.api
        .post(`${API}/analytics/health/solutions/${id}/verify`)
        .set(...bearer(token))
        .send({ validity: 'year_one' });
    const obsolete = (token: string, id: number) =>
      system.api.post(`${API}/analytics/health/solutions/${id}/obsolete`).set(...bearer(token));
    for (const res of [await verify(other.token, expiring), await obsolete(other.token, expired), await verify(manager.token, expiring)]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('Forbidden');
    }
    await system.analyticsCaughtUp();
    expect((await health(system.adminToken)).body.expired).toBe(2);

    const verified = await verify(author.token, expiring);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: expiring, validity_period: 'year_one' });
    expect((await obsolete(author.token, expired)).status).toBe(204);
    expect((await system.api.get(`${API}/solutions/${expired}`).set(...author.auth)).body.is_deleted).toBe(true);
    await system.analyticsCaughtUp();
    expect((await health(system.adminToken)).body).toMatchObject({ expiring: 0, expired: 0 });
    expect((await queue(author.token)).body.items).toEqual([]);
    // An unknown solution: the content service's 404 passes through.
    expect((await verify(system.adminToken, 2147483000)).status).toBe(404);
  });

  test('a validation request waits until the solution is validated again', async () => {
    const asked = await system.api.put(`${API}/questions/${question}/request-validation`).set(...other.auth);
    expect(asked.status).toBe(200);
    await system.analyticsCaughtUp();
    expect((await health(system.adminToken)).body.validation_requested).toBe(1);
    const item = (await queue(author.token, 'kind=validation_requested')).body.items;
    expect(item).toMatchObject([{ question_id: question, solution_id: expiring, responsible_id: author.user.id }]);
    await system.api
      .post(`${API}/solutions/${expiring}/validate`)
      .set(...author.auth)
      .send({ validity: 'year_one' });
    await system.analyticsCaughtUp();
    expect((await health(system.adminToken)).body.validation_requested).toBe(0);
  });

  test('closed spaces count only for their members and administrators', async () => {
    const contentAdmin = await system.createUser({}, ['user', 'content_admin']);
    await closedSpaceQuestion(system, contentAdmin.token, 'A closed question nobody accepted');
    await system.analyticsCaughtUp();
    system.clock.advance(2 * DAY * 1000);
    const byManager = (await health(manager.token, 'after_days=1')).body.unaccepted;
    const byAdmin = (await health(system.adminToken, 'after_days=1')).body.unaccepted;
    expect(byAdmin).toBe(byManager + 1);
    // The poser of an unaccepted question stays anonymous to a manager.
    const items = (await queue(manager.token, 'kind=unaccepted&after_days=1&limit=500')).body.items;
    expect(items.length).toBe(byManager);
    expect(items.every((i: any) => i.responsible_id === null)).toBe(true);
  });
});

test('routing: questions published live are counted with their experts', async () => {
  const asker = await system.createUser();
  const { id } = await newQuestion(system, asker.token, { title: 'Is there an expert for cask ales?', tags: ['cask'] });
  await system.routed();
  await system.analyticsCaughtUp();
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + DAY * 1000).toISOString().slice(0, 10);
  const res = await system.api.get(`${API}/analytics/routing?from=${today}&to=${tomorrow}`).set(...bearer(system.adminToken));
  expect(res.status).toBe(200);
  expect(res.body.questions_routed).toBeGreaterThanOrEqual(1);
  expect(res.body.declines).toBe(0);
  const routed = await system.services.analytics.runtime.db.selectFrom('routings').selectAll().where('question_id', '=', id).execute();
  expect(routed).toHaveLength(1);
  // Per-person load is for administrators only.
  expect(Array.isArray(res.body.experts)).toBe(true);
  const byManager = await system.api.get(`${API}/analytics/routing?from=${today}&to=${tomorrow}`).set(...bearer(manager.token));
  expect(byManager.body.experts).toBeNull();
});

test('gaps: tags whose questions grow faster than their answers, and tags with one expert', async () => {
  const res = await system.api.get(`${API}/analytics/gaps?from=2026-01-05&to=2026-01-12`).set(...bearer(system.adminToken));
  expect(res.status).toBe(200);
  // The week before had no question; one person answered all of them.
  expect(res.body.items).toEqual([
    expect.objectContaining({
      tag: 'hops',
      asked: 6,
      asked_before: 0,
      answered: 4,
      experts: 1,
      growing_faster_than_answers: true,
      single_expert: true,
    }),
    expect.objectContaining({
      tag: 'malt',
      asked: 3,
      asked_before: 0,
      answered: 3,
      experts: 1,
      growing_faster_than_answers: false,
      single_expert: true,
    }),
  ]);
  const next = await system.api.get(`${API}/analytics/gaps?from=2026-01-12&to=2026-01-19`).set(...bearer(system.adminToken));
  expect(next.body.items).toEqual([
    expect.objectContaining({ tag: 'hops', asked: 1, asked_before: 6, growing_faster_than_answers: false }),
  ]);
  // Three askers of malt: withheld from a manager.
  const byManager = await system.api.get(`${API}/analytics/gaps?from=2026-01-05&to=2026-01-12`).set(...bearer(manager.token));
  expect(byManager.body.items.find((i: any) => i.tag === 'malt')).toMatchObject({ suppressed: true, asked: null, experts: null });
});
