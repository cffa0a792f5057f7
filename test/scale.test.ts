import * as content from '@kn/content';
import * as exportsModule from '@kn/exports';
import * as notifications from '@kn/notifications';
import * as search from '@kn/search';
import { scrapeMetric, waitFor } from '@kn/testing';
import * as users from '@kn/users';
import { bearer, type System, startSystem } from './system.ts';

/**
 * Two instances of every service against one Postgres and one NATS, as an operator scales them:
 * requests spread over both (NATS queue groups), events too (shared durable consumers), each
 * handled once, and an instance stopped in the middle of traffic loses nothing.
 */
let system: System;
type Started = { runtime: { metricsUrl: string }; stop(): Promise<void> };
const seconds: Record<string, Started> = {};

beforeAll(async () => {
  system = await startSystem();
  const { env } = system;
  seconds.users = await users.start(users.loadConfig(env));
  seconds.content = await content.start(content.loadConfig(env));
  seconds.notifications = await notifications.start(notifications.loadConfig(env));
  const secondSearch = await search.start(search.loadConfig({ ...env, SEARCH_INDEX_PATH: `${env.SEARCH_INDEX_PATH}.second` }));
  seconds.search = secondSearch;
  seconds.exports = await exportsModule.start(exportsModule.loadConfig(env));
  await secondSearch.backend.caughtUp();
}, 90_000);
afterAll(async () => {
  for (const s of Object.values(seconds)) await s.stop().catch(() => {});
  await system?.stop();
});

/** The sum of a counter's samples whose labels contain every part. */
/** The sum of a metric's samples whose labels hold every one of `parts`. */
async function counter(url: string, metric: string, ...parts: string[]) {
  let sum = 0;
  for (const [labels, value] of await scrapeMetric(url, metric)) if (parts.every((p) => labels.includes(p))) sum += value;
  return sum;
}

test('requests and events spread over two instances of every service, each handled once', async () => {
  const poser = await system.createUser({ firstname: 'Poser' });
  const mentioned = await system.createUser({ firstname: 'Mentioned' });
  const admin = bearer(system.adminToken);
  const mention = `<span data-mention-user-id="${mentioned.user.id}">@Mentioned</span>`;
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) {
    const d = await system.api
      .post('/api/v1/questions')
      .set(...poser.auth)
      .send({ title: `Scaled question number ${i} about hops`, description: `<p>hops ${mention}</p>`, tags: ['scale'] });
    expect(d.status).toBe(201);
    expect((await system.api.put(`/api/v1/questions/${d.body.id}/publish`).set(...poser.auth)).status).toBe(200);
    ids.push(d.body.id);
  }
  await system.searchCaughtUp();
  for (let i = 0; i < 20; i++) {
    expect((await system.api.get(`/api/v1/users/${mentioned.user.id}`).set(...poser.auth)).status).toBe(200);
    expect((await system.api.get('/api/v1/questions?query=hops').set(...poser.auth)).status).toBe(200);
    expect((await system.api.get('/api/v1/notifications/count').set(...mentioned.auth)).status).toBe(200);
    expect((await system.api.get('/api/v1/export/content').set(...admin)).status).toBe(200);
  }
  const firsts = system.services as unknown as Record<string, Started>;
  for (const service of ['users', 'content', 'notifications', 'search', 'exports']) {
    const answered = await Promise.all(
      [firsts[service]!, seconds[service]!].map((s) => counter(s.runtime.metricsUrl, 'kn_rpc_server_requests_total')),
    );
    expect([service, answered.every((n) => n > 0)]).toEqual([service, true]);
  }
  // Every mention notified once: 20 questions, 20 notifications, from both notifications instances.
  await waitFor(
    async () => {
      const res = await system.api.get('/api/v1/notifications?limit=100').set(...mentioned.auth);
      return res.body.total === 20;
    },
    { what: '20 notifications' },
  );
  const res = await system.api.get('/api/v1/notifications?limit=100').set(...mentioned.auth);
  expect(new Set(res.body.items.map((n: { question_id: number }) => n.question_id))).toEqual(new Set(ids));
  const handled = await Promise.all(
    [firsts.notifications!, seconds.notifications!].map((s) =>
      counter(s.runtime.metricsUrl, 'kn_consumer_events_total', 'consumer="notifications-content"', 'outcome="handled"'),
    ),
  );
  expect(handled.every((n) => n > 0)).toBe(true);
  // Each question was routed once, whichever search instance answered or consumed.
  const routings = await system.services.search.runtime.db.selectFrom('routings').select('question_id').execute();
  expect(routings.map((r) => r.question_id).sort()).toEqual([...ids].sort());
});

test('an instance stopped in the middle of traffic drains: every request answered, every event handled', async () => {
  const poser = await system.createUser({ firstname: 'Steady' });
  const written = () => counter(seconds.content!.runtime.metricsUrl, 'kn_rpc_server_requests_total', 'operation="createQuestion"');
  const before = await written();
  const writes = Array.from({ length: 30 }, (_, i) =>
    system.api
      .post('/api/v1/questions')
      .set(...poser.auth)
      .send({ title: `Question written while an instance stops ${i}`, tags: ['drain'] }),
  );
  // Stop the second content instance once it has answered one of the writes: the others are under way.
  const stopping = waitFor(async () => (await written()) > before, { what: 'the second instance answering a write' }).then(() =>
    seconds.content!.stop(),
  );
  const answers = await Promise.all(writes);
  await stopping;
  expect(answers.map((a) => a.status)).toEqual(Array(30).fill(201));
  const created = await system.services.content.runtime.db
    .selectFrom('questions')
    .select('id')
    .where('author_id', '=', poser.user.id)
    .execute();
  expect(created).toHaveLength(30);
  // The events of those writes reach the search index (the first content instance relays what the second left).
  await system.searchCaughtUp();
  expect(system.services.search.backend.status().questions).toBeGreaterThanOrEqual(20);
  const events = await system.services.content.runtime.db.selectFrom('outbox').select('id').execute();
  expect(events).toHaveLength(0);
});
