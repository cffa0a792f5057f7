import * as analytics from '@kn/analytics';
import { waitFor } from '@kn/testing';
import { API, contentEvents, newQuestion, publishedSolution } from './fixtures.ts';
import { startSmtpStandIn } from './smtp-stand-in.ts';
import { bearer, type System, startSystem } from './system.ts';

// The weekly digest e-mail, declines ("not me") and the reuse figures (views of solved questions,
// drafts left after similar questions were shown), through the real system.

type TestUser = Awaited<ReturnType<System['createUser']>>;
const DAY_MS = 86_400_000;

let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
const mailsTo = (u: TestUser) => smtp.mailsTo(u.user.email);

let system: System;
let manager: TestUser;
let people: TestUser[];

const today = () => new Date().toISOString().slice(0, 10);
const tomorrow = () => new Date(Date.now() + DAY_MS).toISOString().slice(0, 10);
const get = (token: string, path: string) => system.api.get(`${API}${path}`).set(...bearer(token));

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  system = await startSystem({
    SMTP_URL: smtp.url,
    OUTBOX_POLL_MS: '100',
    ANALYTICS_CACHE_MS: '0',
    // The clock moves a week and more ahead: tokens must outlive that.
    TOKEN_TTL: String(365 * 86_400),
  });
  manager = await system.createUser({}, ['user', 'manager']);
  people = [];
  for (let i = 0; i < 6; i++) people.push(await system.createUser());
});

afterAll(async () => {
  await system?.stop();
  await smtp?.close();
});

describe('declines', () => {
  test('"not me" is recorded once per person and question, and the routing figures count it', async () => {
    const { id } = await newQuestion(system, people[0]!.token, { title: 'Who knows how to store hops cold?', tags: ['storage'] });
    const decline = (token: string, question = id) => system.api.post(`${API}/questions/${question}/decline`).set(...bearer(token));
    expect((await decline(people[1]!.token)).status).toBe(204);
    // A second decline changes nothing.
    expect((await decline(people[1]!.token)).status).toBe(204);
    expect((await decline(people[2]!.token)).status).toBe(204);
    // The poser cannot decline their own question; an unknown question is 404.
    const own = await decline(people[0]!.token);
    expect(own.status).toBe(409);
    expect(own.body.code).toBe('Conflict');
    expect((await decline(people[1]!.token, 2147483000)).status).toBe(404);
    const events = (await contentEvents(system, 'content.question.declined.v1')).filter((e) => e.data.question.id === id);
    expect(events.map((e) => e.data.user_id).sort()).toEqual([people[1]!.user.id, people[2]!.user.id].sort());

    await system.analyticsCaughtUp();
    const routing = await get(system.adminToken, `/analytics/routing?from=${today()}&to=${tomorrow()}`);
    expect(routing.status).toBe(200);
    expect(routing.body.declines).toBe(2);
  });
});

describe('reuse', () => {
  let solved: number;
  let open: number;

  beforeAll(async () => {
    solved = (await newQuestion(system, people[0]!.token, { title: 'How long does dry yeast keep in a fridge?', tags: ['yeast'] })).id;
    await publishedSolution(system, people[1]!.token, solved, '<p>About two years, sealed.</p>');
    open = (await newQuestion(system, people[0]!.token, { title: 'Which barrel wood gives vanilla notes?', tags: ['barrel'] })).id;
  });

  test('views are sent as one event for many questions and counted as views of solved questions', async () => {
    const view = async (u: TestUser, id: number) => expect((await get(u.token, `/questions/${id}`)).status).toBe(200);
    for (const u of people.slice(2, 5)) await view(u, solved);
    // The same person on the same day counts once.
    await view(people[2]!, solved);
    for (const u of people.slice(2, 4)) await view(u, open);
    const before = (await contentEvents(system, 'content.question.views-counted.v1')).length;
    // Whatever the timer has sent already, this round sends the rest.
    await system.services.content.viewEvents.runOnce();
    const events = await contentEvents(system, 'content.question.views-counted.v1');
    expect(events.length).toBeLessThanOrEqual(before + 1);
    const counted = events.flatMap((e) => e.data.questions as Array<{ question_id: number; views: number; solved_views: number }>);
    const total = (id: number, key: 'views' | 'solved_views') =>
      counted.filter((c) => c.question_id === id).reduce((sum, c) => sum + c[key], 0);
    expect([total(solved, 'views'), total(solved, 'solved_views'), total(open, 'views'), total(open, 'solved_views')]).toEqual([
      3, 3, 2, 0,
    ]);
    // Nothing is left to send: each view is in one event.
    expect(await system.services.content.viewEvents.runOnce()).toBe(0);

    await system.analyticsCaughtUp();
    const res = await get(system.adminToken, `/analytics/reuse?from=${today()}&to=${tomorrow()}&granularity=day`);
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([expect.objectContaining({ period: today(), views: 5, solved_views: 3, solved_questions_viewed: 1 })]);
  });

  test('drafts shown similar questions: published or left, withheld under five authors', async () => {
    await system.searchCaughtUp();
    const similar = (token: string, draft: number) =>
      get(token, `/search/questions-similar?query=${encodeURIComponent('dry yeast keep fridge')}&draft=${draft}`);
    const drafts: number[] = [];
    for (const u of people.slice(0, 5)) {
      const { id } = await newQuestion(system, u.token, { title: 'Does dry yeast keep in the fridge?' }, { publish: false });
      drafts.push(id);
    }
    // Somebody else's draft is not the caller's to record: 404, and nothing recorded.
    const foreign = await similar(people[1]!.token, drafts[0]!);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NotFound');
    for (const [i, id] of drafts.slice(0, 4).entries()) {
      const res = await similar(people[i]!.token, id);
      expect(res.status).toBe(200);
      expect(res.body.items.map((q: { id: number }) => q.id)).toContain(solved);
    }
    // Shown again: still one record per draft.
    await similar(people[0]!.token, drafts[0]!);
    for (const [i, id] of drafts.slice(0, 2).entries())
      expect((await system.api.put(`${API}/questions/${id}/publish`).set(...people[i]!.auth)).status).toBe(200);
    await system.analyticsCaughtUp();
    const reuse = (token: string) => get(token, `/analytics/reuse?from=${today()}&to=${tomorrow()}&granularity=day`);
    expect((await reuse(system.adminToken)).body.rows[0]).toMatchObject({
      drafts_shown_similar: 4,
      drafts_published: 2,
      drafts_not_published: 2,
      suppressed: false,
    });
    // Four authors would be named to a manager: withheld, the views still shown.
    expect((await reuse(manager.token)).body.rows[0]).toMatchObject({
      views: 5,
      drafts_shown_similar: null,
      drafts_not_published: null,
      suppressed: true,
    });
    expect((await similar(people[4]!.token, drafts[4]!)).status).toBe(200);
    await system.analyticsCaughtUp();
    expect((await reuse(manager.token)).body.rows[0]).toMatchObject({
      drafts_shown_similar: 5,
      drafts_not_published: 3,
      suppressed: false,
    });
    const shown = await contentEvents(system, 'content.question.similar-shown.v1');
    expect(shown.map((e) => e.data.question.id).sort()).toEqual([...drafts].sort());
  });
});

describe('the weekly digest', () => {
  const setting = '/users/me/settings/communication/analytics-digest';
  const put = (token: string, weekly: boolean) =>
    system.api
      .put(`${API}${setting}`)
      .set(...bearer(token))
      .send({ weekly_digest: weekly });

  test('a manager asks for it; others may not; it is off by default', async () => {
    expect((await get(manager.token, setting)).body).toEqual({ weekly_digest: false });
    const on = await put(manager.token, true);
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ weekly_digest: true });
    expect((await get(manager.token, setting)).body).toEqual({ weekly_digest: true });
    const plain = await put(people[0]!.token, true);
    expect(plain.status).toBe(403);
    expect(plain.body.code).toBe('Forbidden');
    const bad = await system.api
      .put(`${API}${setting}`)
      .set(...manager.auth)
      .send({ weekly_digest: 'yes' });
    expect(bad.status).toBe(400);
    expect((await get(manager.token, setting)).body).toEqual({ weekly_digest: true });
  });

  test('once per person and week, whatever the rounds and instances; the figures the manager may see', async () => {
    const quiet = await system.createUser({}, ['user', 'manager']);
    // Five askers this week: the manager's figures are not withheld.
    for (const u of people.slice(2, 5)) await newQuestion(system, u.token, { title: `What does ${u.user.lastname} brew on Sundays?` });
    await system.analyticsCaughtUp();
    // A week on, the last whole week is the one everything above happened in.
    system.clock.advance(7 * DAY_MS);
    const now = system.clock.now();
    const sinceMonday = (now.getUTCDay() + 6) % 7;
    const monday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - (sinceMonday + 7) * DAY_MS);
    const week = monday.toISOString().slice(0, 10);

    // A second instance of the service beside the first: both run rounds at once.
    const second = await analytics.start(analytics.loadConfig(system.env), { clock: system.clock });
    try {
      const first = system.services.analytics.digest;
      const handed = await Promise.all([first.runOnce(), second.digest.runOnce(), first.runOnce(), second.digest.runOnce()]);
      expect(handed.reduce((a, b) => a + b, 0)).toBe(1);
    } finally {
      await second.stop();
    }
    // A restart that lost the mark (handed over, not recorded): the outbox still sends it once.
    await system.services.analytics.runtime.db.deleteFrom('digests_sent').execute();
    expect(await system.services.analytics.digest.runOnce()).toBe(1);

    await waitFor(() => mailsTo(manager).length > 0, { what: 'the weekly digest' });
    await system.services.notifications.workers.email.drain();
    expect(mailsTo(manager)).toHaveLength(1);
    expect(mailsTo(quiet)).toHaveLength(0);
    const mail = mailsTo(manager)[0]!.raw.replace(/=\r?\n/g, '');
    expect(mail).toContain(`the week from ${week} in figures`);
    // The figures are the manager's: those the API gives them for that week.
    const weekEnd = new Date(monday.getTime() + 7 * DAY_MS).toISOString().slice(0, 10);
    const flow = await get(manager.token, `/analytics/flow?from=${week}&to=${weekEnd}&granularity=week`);
    const row = flow.body.rows.find((r: { period: string }) => r.period === week);
    expect(row?.asked).toBeGreaterThan(0);
    expect(mail).toContain(`${row.asked} asked, ${row.answered} answered`);
    const health = (await get(manager.token, '/analytics/health')).body;
    expect(mail).toContain(`${health.unaccepted} questions without an accepted solution`);
  });
});
