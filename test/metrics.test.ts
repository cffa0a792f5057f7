import { scrapeMetric as scrape } from '@kn/testing';
import { type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 60_000);
afterAll(() => system?.stop());

const find = (samples: Map<string, number>, ...parts: string[]) =>
  [...samples].filter(([labels]) => parts.every((p) => labels.includes(p))).reduce((sum, [, v]) => sum + v, 0);

test('every process serves Prometheus metrics: HTTP and NATS requests, outbox, consumers, search index, exports', async () => {
  const user = await system.createUser();
  const created = await system.api
    .post('/api/v1/questions')
    .set(...user.auth)
    .send({ title: 'Which metrics does the gateway count?', tags: ['metrics'] });
  expect(created.status).toBe(201);
  expect((await system.api.get('/api/v1/questions/999999').set(...user.auth)).status).toBe(404);
  await system.searchCaughtUp();

  const http = await scrape(system.gateway.metricsUrl, 'kn_http_requests_total');
  expect(find(http, 'route="/api/v1/questions"', 'method="POST"', 'status="201"')).toBe(1);
  expect(find(http, 'route="/api/v1/questions/:id"', 'status="404"')).toBe(1);
  expect(find(await scrape(system.gateway.metricsUrl, 'kn_http_request_duration_seconds_count'), 'route="/api/v1/questions"')).toBe(1);
  expect(find(await scrape(system.gateway.metricsUrl, 'kn_rpc_client_requests_total'), 'operation="createQuestion"', 'status="200"')).toBe(
    1,
  );

  const { content, search, notifications, exports } = system.services;
  const rpc = await scrape(content.runtime.metricsUrl, 'kn_rpc_server_requests_total');
  expect(find(rpc, 'operation="createQuestion"', 'status="200"')).toBe(1);
  expect(find(rpc, 'operation="getQuestion"', 'status="404"')).toBe(1);
  expect(await scrape(content.runtime.metricsUrl, 'kn_outbox_pending_events')).toEqual(new Map([['{process="content"}', 0]]));
  const lag = await scrape(notifications.runtime.metricsUrl, 'kn_consumer_pending_events');
  expect([...lag.keys()].some((k) => k.includes('consumer="notifications-content"'))).toBe(true);
  expect(await scrape(search.runtime.metricsUrl, 'kn_search_index_lag_events')).toEqual(
    new Map([
      ['{stream="content",process="search"}', 0],
      ['{stream="users",process="search"}', 0],
    ]),
  );
  expect(find(await scrape(exports.runtime.metricsUrl, 'kn_export_jobs'), 'status="processing"')).toBe(0);
  // The process's own figures come along.
  expect((await scrape(search.runtime.metricsUrl, 'kn_process_resident_memory_bytes')).size).toBe(1);
  expect((await fetch(system.gateway.metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
  for (const url of [system.gateway.metricsUrl, content.runtime.metricsUrl, search.runtime.metricsUrl]) {
    const health = await fetch(url.replace('/metrics', '/healthz'));
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
  }
});
