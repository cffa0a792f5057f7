import { randomUUID } from 'node:crypto';
import { ApiError, KnClient, type Subscription, subscribe } from '@kn/client';
import { scrapeMetric, waitFor } from '@kn/testing';
import { ADMIN, type System, startSystem } from './system.ts';

/** @kn/client against the real system: typed calls, pages, retries with one Idempotency-Key, acting on behalf, typed errors, events. */
let system: System;
let admin: KnClient;
beforeAll(async () => {
  system = await startSystem();
  admin = await new KnClient({ baseUrl: `${system.url}/api/v1` }).login(ADMIN.email, ADMIN.password);
});
afterAll(() => system?.stop());

const person = async (firstname: string) => {
  const email = `${firstname.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`;
  const user = await admin.call('createUser', {
    body: { email, firstname, lastname: 'Client', language: 'en', password: 'a-long-password', roles: ['user', 'api_user'] },
  });
  return { user, client: await admin.withToken(undefined).login(email, 'a-long-password') };
};

test('calls are typed by the contracts: what goes in, what comes out', async () => {
  const me = await admin.call('getMe');
  expect(me.email).toBe(ADMIN.email);
  const question = await admin.call('createQuestion', { body: { title: 'Does the typed client ask questions?', tags: ['client'] } });
  expect(question.is_published).toBe(false);
  const { number_of_experts } = await admin.call('publishQuestion', { params: { id: question.id } });
  expect(number_of_experts).toBeGreaterThanOrEqual(0);
  const read = await admin.call('getQuestion', { params: { id: question.id } });
  expect(read.concepts.map((c) => c.primary_label)).toEqual(['client']);
  // An answer without a body is undefined; the status and headers are there for who asks.
  const followed = await admin.send('followQuestion', { params: { id: question.id } });
  expect(followed).toMatchObject({ ok: true, status: 200, data: undefined });
  expect(followed.requestId).toEqual(expect.any(String));
  expect(followed.rateLimit?.limit).toBeGreaterThan(0);
});

test('errors are typed: the contract’s code, status, failing fields and the request id', async () => {
  const missing = await admin.call('getQuestion', { params: { id: 2147483647 } }).catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(ApiError);
  const error = missing as ApiError;
  expect([error.status, error.code, error.is('NotFound')]).toEqual([404, 'NotFound', true]);
  expect(error.requestId).toEqual(expect.any(String));
  const invalid = (await admin.call('createQuestion', { body: { title: 'x'.repeat(101) } }).catch((e: unknown) => e)) as ApiError;
  expect([invalid.status, invalid.code, invalid.fields.map((f) => f.path)]).toEqual([400, 'ValidationError', ['title']]);
  const anonymous = (await admin
    .withToken(undefined)
    .call('getMe')
    .catch((e: unknown) => e)) as ApiError;
  expect(anonymous.code).toBe('Unauthorized');
});

test('acts on behalf of another user, by id or by email', async () => {
  const { user } = await person('Olga');
  expect((await admin.onBehalfOf({ userId: user.id }).call('getMe')).id).toBe(user.id);
  expect((await admin.call('getMe', {}, { onBehalfOf: { email: user.email } })).id).toBe(user.id);
});

test('pages: every item of a paged list, one page after another', async () => {
  const tag = `paged-${randomUUID().slice(0, 6)}`;
  for (let i = 0; i < 7; i++) {
    const q = await admin.call('createQuestion', { body: { title: `Paged question number ${i}`, tags: [tag] } });
    await admin.call('publishQuestion', { params: { id: q.id } });
  }
  const pages: number[] = [];
  for await (const page of admin.pages('listQuestions', { query: { tags: tag, limit: 3 } })) pages.push(page.items.length);
  expect(pages).toEqual([3, 3, 1]);
  const titles: string[] = [];
  for await (const q of admin.items('listQuestions', { query: { tags: tag, limit: 3, sort: 'id.asc' } })) titles.push(q.title);
  expect(titles).toEqual(Array.from({ length: 7 }, (_, i) => `Paged question number ${i}`));
});

test('a POST retried after its first attempt got no answer carries the same Idempotency-Key: it asks once', async () => {
  const { user, client } = await person('Rita');
  // Each attempt waits at most a second: the first is held inside its transaction longer.
  const patient = new KnClient({ ...client.options, timeoutMs: 1_000, retry: { attempts: 5, delayMs: 10 } });
  const title = `Asked once however often it is sent ${randomUUID().slice(0, 6)}`;
  const { sent } = await system.holding('content.questions', async (waiting) => {
    const sent = patient.send('createQuestion', { body: { title } });
    await waiting('relation');
    // The first attempt timed out at the client; its retry (same key) waits at the gateway for the first one's answer.
    await waitFor(
      async () => (await scrapeMetric(system.gateway.metricsUrl, 'kn_idempotency_waiting_requests')).get('{process="gateway"}') === 1,
      { what: 'the retry waiting for its first attempt' },
    );
    return { sent };
  });
  const answer = await sent;
  expect(answer.ok).toBe(true);
  expect(answer.replayed).toBe(true);
  expect(patient.stats.retries).toBeGreaterThanOrEqual(1);
  const asked = await system.services.content.runtime.db
    .selectFrom('questions')
    .select(['id', 'author_id'])
    .where('title', '=', title)
    .execute();
  expect(asked).toEqual([{ id: (answer as { data: { id: number } }).data.id, author_id: user.id }]);
});

test('uploads and downloads files', async () => {
  const question = await admin.call('createQuestion', { body: { title: 'Where do attachments of the client go?' } });
  const attachment = await admin.call('addQuestionAttachment', {
    params: { id: question.id },
    body: { file: new Blob(['client notes'], { type: 'text/plain' }), filename: 'notes.txt' },
  });
  expect(attachment).toMatchObject({ name: 'notes.txt', mime_type: 'text/plain', size: 12 });
  const file = await admin.call('downloadAttachment', { params: { id: attachment.id } });
  expect(Buffer.from(file.bytes).toString()).toBe('client notes');
  expect(file).toMatchObject({ contentType: 'text/plain', filename: 'notes.txt' });
});

describe('the event subscriber', () => {
  let subscription: Subscription | undefined;
  afterEach(async () => {
    await subscription?.stop();
    subscription = undefined;
  });

  test('hands every event of a stream to its typed handler, validated, and acknowledges it', async () => {
    const seen: string[] = [];
    const problems: string[] = [];
    const { bus } = system.services.content.runtime;
    subscription = await subscribe({
      url: system.env.NATS_URL,
      namespace: system.env.NATS_NAMESPACE,
      stream: 'users',
      durable: 'client-test-users',
      ignore: ['users.settings.updated.v1', 'users.network-settings.updated.v1'],
      handlers: {
        'users.user.created.v1': ({ data }) => {
          seen.push(`created ${data.user.email}`);
        },
        'users.user.updated.v1': ({ data }) => {
          seen.push(`updated ${data.user.id}`);
        },
        'users.user.deleted.v1': ({ data }) => {
          seen.push(`deleted ${data.user_id}`);
        },
      },
      onProblem: (p) => problems.push(`${p.kind} ${p.subject}`),
    });
    const { user } = await person('Eve');
    await admin.call('deleteUser', { params: { id: user.id } });
    // A payload that does not match the catalogue is refused (terminated), never handed on.
    const forged = { id: randomUUID(), subject: 'users.user.deleted.v1', occurred_at: new Date().toISOString(), actor_id: null, data: {} };
    await bus.js.publish(bus.subject('users.user.deleted.v1'), JSON.stringify(forged), { msgID: forged.id });
    await system.services.users.runtime.relay.flush();
    await subscription.caughtUp();
    expect(seen).toEqual(expect.arrayContaining([`created ${user.email}`, `deleted ${user.id}`]));
    expect(seen.filter((s) => s === `deleted ${user.id}`)).toHaveLength(1);
    expect(problems).toEqual(['invalid users.user.deleted.v1']);
    // Acknowledged: the durable consumer has nothing left to deliver.
    const info = await bus.jsm.consumers.info(bus.streamName('users'), 'client-test-users');
    expect([info.num_pending, info.num_ack_pending]).toEqual([0, 0]);
  });

  test('a subscriber that neither handles nor ignores a subject of its stream does not start', async () => {
    await expect(
      subscribe({
        url: system.env.NATS_URL,
        namespace: system.env.NATS_NAMESPACE,
        stream: 'search',
        durable: 'client-test-search',
        ignore: [],
        handlers: {} as never,
      }),
    ).rejects.toThrow(/neither handles nor ignores search\.experts\.found\.v1/);
  });
});
