import { initTracing, shutdownTracing } from '@kn/telemetry';
import { InMemorySpanExporter } from '@kn/telemetry/testing';
import { type System, startSystem } from './system.ts';

// Every service of this file runs in this process: one tracer provider records them all.
const exporter = new InMemorySpanExporter();
let system: System;

beforeAll(async () => {
  await initTracing('test', { exporter });
  system = await startSystem();
}, 60_000);
afterAll(async () => {
  await system?.stop();
  await shutdownTracing();
});

test('one trace follows a request from the gateway through NATS to the service and on to the consumers of its events', async () => {
  const poser = await system.createUser({ firstname: 'Traced' });
  const draft = await system.api
    .post('/api/v1/questions')
    .set(...poser.auth)
    .send({ title: 'How is a request traced end to end?', description: '<p>spans</p>', tags: ['tracing'] });
  expect(draft.status).toBe(201);
  exporter.reset();
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const res = await system.api
    .put(`/api/v1/questions/${draft.body.id}/publish`)
    .set(...poser.auth)
    .set('traceparent', traceparent);
  expect(res.status).toBe(200);
  await system.routed();

  const spans = exporter.getFinishedSpans();
  const byName = (name: string) => spans.filter((s) => s.name === name);
  const parentOf = (s: (typeof spans)[number]) => s.parentSpanContext?.spanId;
  // The caller's trace goes on: the gateway's span is a child of the incoming traceparent.
  const [http] = byName('PUT /api/v1/questions/:id/publish');
  expect(http?.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  expect(parentOf(http!)).toBe('00f067aa0ba902b7');
  // Gateway → NATS request → the content service.
  const [rpc] = byName('rpc content.publishQuestion');
  expect(rpc?.spanContext().traceId).toBe(http!.spanContext().traceId);
  expect(parentOf(rpc!)).toBe(http!.spanContext().spanId);
  // The content service's event → the consumers of other services, through the outbox and JetStream.
  const consumers = byName('consume content.question.published.v1');
  expect(consumers.length).toBeGreaterThanOrEqual(2);
  for (const c of consumers) {
    expect(c.spanContext().traceId).toBe(http!.spanContext().traceId);
    expect(parentOf(c)).toBe(rpc!.spanContext().spanId);
  }
  // …and on: the routing decision that consumer made is consumed by the notifications service.
  const [routed] = byName('consume search.experts.found.v1');
  expect(routed?.spanContext().traceId).toBe(http!.spanContext().traceId);
  expect(
    consumers
      .map((c) => c.spanContext().spanId)
      .concat(spans.filter((s) => s.name === 'rpc search.routeQuestion').map((s) => s.spanContext().spanId)),
  ).toContain(parentOf(routed!));
});
