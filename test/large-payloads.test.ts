import { type Subscription, subscribe } from '@kn/client';
import { type EventEnvelope, events, PAYLOAD_HEADER } from '@kn/contracts';
import { waitFor } from '@kn/testing';
import JSZip from 'jszip';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * Descriptions are unlimited in the interface; a JSON body may have 10 MiB. A body, event or answer
 * larger than a NATS message (max_payload, 1 MiB here) travels through the object store with the
 * message naming it (claim check in @kn/bus): a 5 MiB description is stored, answered, published
 * to every kind of reader (durable consumers, the search index, @kn/client subscribers) and exported.
 */

let system: System;
let subscription: Subscription | undefined;
const published: Array<EventEnvelope<'content.question.published.v1'>> = [];
const problems: string[] = [];

beforeAll(async () => {
  // Megabytes of description take seconds to sanitize and store on a loaded 2-core machine: this
  // file is about completeness, not speed, so the gateway waits longer.
  system = await startSystem({ RPC_TIMEOUT_MS: '60000' });
  subscription = await subscribe({
    url: system.env.NATS_URL,
    namespace: system.env.NATS_NAMESPACE,
    stream: 'content',
    durable: 'large-payloads-test',
    ignore: Object.keys(events).filter((s) => s.startsWith('content.') && s !== 'content.question.published.v1') as never,
    handlers: {
      'content.question.published.v1': (event: EventEnvelope<'content.question.published.v1'>) => {
        published.push(event);
      },
    } as never,
    onProblem: (p) => problems.push(`${p.kind} ${p.subject}: ${String(p.error)}`),
  });
}, 120_000);
afterAll(async () => {
  await subscription?.stop();
  await system?.stop();
});

const MiB = 1024 * 1024;
const binary = (res: any, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

test('a 5 MiB description is stored, answered whole, published to every reader, found by search and exported', async () => {
  const poser = await system.createUser();
  const mentioned = await system.createUser();
  const { bus } = system.services.content.runtime;
  const maxPayload = bus.nc.info!.max_payload;

  // Only the last paragraph has the word searched for, and the mention.
  const filler = '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>';
  const tail = `<p>The quasiquotation ends it, says <span data-mention-user-id="${mentioned.user.id}">@Mia</span>.</p>`;
  const description = filler.repeat(Math.ceil((5 * MiB - tail.length) / filler.length)) + tail;
  expect(description.length).toBeGreaterThanOrEqual(5 * MiB);
  expect(description.length).toBeGreaterThan(5 * maxPayload);

  const created = await system.api
    .post(`${API}/questions`)
    .set(...bearer(poser.token))
    .send({ title: 'What does a very long description look like?', description });
  expect([created.status, created.body.code, created.body.message]).toEqual([201, undefined, undefined]);
  expect(created.body.description).toBe(description);
  const id = created.body.id as number;
  const publish = await system.api.put(`${API}/questions/${id}/publish`).set(...bearer(poser.token));
  expect(publish.status).toBe(200);

  const read = await system.api.get(`${API}/questions/${id}`).set(...bearer(mentioned.token));
  expect(read.status).toBe(200);
  expect(read.body.description).toBe(description);

  // On the stream the event is a reference: an empty body and the object's name.
  await system.services.content.runtime.relay.flush();
  const stream = bus.streamName('content');
  const onStream = await bus.jsm.streams.getMessage(stream, { last_by_subj: bus.subject('content.question.published.v1') });
  expect(onStream?.data.length).toBe(0);
  expect(onStream?.header.get(PAYLOAD_HEADER)).toBeTruthy();

  // A @kn/client subscriber gets the whole event.
  await subscription!.caughtUp();
  expect(problems).toEqual([]);
  const event = published.find((e) => e.data.question.id === id);
  expect(event?.data.question.description).toBe(description);

  // The search index (its own reader of the stream) has the last paragraph's word.
  await system.searchCaughtUp();
  const found = await system.api.get(`${API}/questions?query=quasiquotation`).set(...bearer(poser.token));
  expect(found.status).toBe(200);
  expect(found.body.items.map((q: { id: number }) => q.id)).toEqual([id]);

  // A durable consumer (notifications) handled it: the mention near the end is notified.
  await system.services.notifications.consumers.content.caughtUp();
  const notifications = await system.api.get(`${API}/notifications?limit=100`).set(...bearer(mentioned.token));
  expect(notifications.body.items.filter((n: { target_id: number }) => n.target_id === id).map((n: { type: string }) => n.type)).toEqual([
    'mention_in_question',
  ]);

  // The content export has the whole description.
  const admin = bearer(system.adminToken);
  const started = await system.api.post(`${API}/export/content`).set(...admin);
  expect(started.status).toBe(201);
  const done = await waitFor(
    async () => {
      const record = (await system.api.get(`${API}/export/content/${started.body.export_id}`).set(...admin)).body;
      return record.status !== 'processing' && record;
    },
    { timeoutMs: 60_000, what: 'the content export' },
  );
  expect(done.status).toBe('success');
  const file = await system.api
    .get(`${API}/export/content/${started.body.export_id}/file`)
    .set(...admin)
    .buffer(true)
    .parse(binary);
  const archive = await JSZip.loadAsync(file.body as Buffer);
  const xml = await archive.file(Object.keys(archive.files)[0]!)!.async('string');
  const escaped = description.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  expect(xml.includes(escaped) || xml.includes(description)).toBe(true);
}, 120_000);

test('a body over 10 MiB is refused (413 PayloadTooLarge) and creates nothing', async () => {
  const poser = await system.createUser();
  const res = await system.api
    .post(`${API}/questions`)
    .set(...bearer(poser.token))
    .send({ title: 'Too long to be taken', description: 'x'.repeat(10 * MiB) });
  expect([res.status, res.body.code]).toEqual([413, 'PayloadTooLarge']);
  const mine = await system.services.content.runtime.db
    .selectFrom('questions')
    .select('id')
    .where('author_id', '=', poser.user.id)
    .execute();
  expect(mine).toEqual([]);
});
