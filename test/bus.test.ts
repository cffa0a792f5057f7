import { randomUUID } from 'node:crypto';
import { type Bus, call, connectBus, createBusTables, type EventHandlers, startConsumer, startOutboxRelay, writeEvent } from '@kn/bus';
import { type EventSubject, events, Roles, usersOperations } from '@kn/contracts';
import { createDb, migrate } from '@kn/db';
import { createLogger } from '@kn/telemetry';
import { isolation, scrapeMetric, startNatsServer, waitFor } from '@kn/testing';
import * as users from '@kn/users';
import { type Kysely, sql } from 'kysely';

/**
 * The delivery guarantees, end to end on real servers: the users service publishes through its
 * outbox to a NATS server of this test's own (so the test can restart it), and a probe consumer
 * with its own schema records every event it handles.
 */
let nats: Awaited<ReturnType<typeof startNatsServer>>;
let service: Awaited<ReturnType<typeof users.start>>;
let probeDb: Kysely<any>;
let probeBus: Bus;
let failNext = 0;
let probe: Awaited<ReturnType<typeof startConsumer>>;
const space = isolation();
const { databaseUrl, namespace } = space;
const admin = { id: 1, roles: [...Roles], token_id: null };

const seen = async (subject?: string) =>
  (await probeDb
    .selectFrom('seen')
    .selectAll()
    .$if(subject !== undefined, (q) => q.where('subject', '=', subject!))
    .orderBy('position')
    .execute()) as Array<{
    event_id: string;
    subject: string;
    data: Record<string, unknown>;
  }>;

/** A `users.user.deleted.v1` envelope as a service would publish it (`user_id` as given, valid or not). */
const userDeleted = (user_id: unknown) => ({
  id: randomUUID(),
  subject: 'users.user.deleted.v1',
  occurred_at: new Date().toISOString(),
  actor_id: null,
  data: { user_id },
});

/** One handler for every subject of the users stream (none: events are only acknowledged). */
const probeHandlers = (handle: (...args: never[]) => Promise<void> = async () => {}) =>
  Object.fromEntries(
    Object.keys(events)
      .filter((s) => s.startsWith('users.'))
      .map((s) => [s, handle]),
  ) as unknown as EventHandlers<'users'>;

beforeAll(async () => {
  nats = await startNatsServer();
  service = await users.start(
    users.loadConfig({
      DATABASE_URL: databaseUrl,
      NATS_URL: nats.url,
      NATS_NAMESPACE: namespace,
      LOG_LEVEL: 'silent',
      SCRYPT_COST: '1024',
      METRICS_PORT: '0',
    }),
  );
  probeDb = createDb({ url: databaseUrl, schema: 'probe' });
  await migrate(probeDb, 'probe', {
    '1': {
      up: async (db) => {
        await createBusTables(db);
        await db.schema
          .createTable('seen')
          .addColumn('position', 'serial', (c) => c.primaryKey())
          .addColumn('event_id', 'uuid', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('data', 'jsonb', (c) => c.notNull())
          .execute();
      },
    },
  });
  probeBus = await connectBus({ url: nats.url, namespace, name: 'probe', logger: createLogger('probe', 'silent') });
  const record = async (
    tx: Parameters<EventHandlers<'users'>['users.user.created.v1']>[0],
    event: { id: string; subject: string; data: unknown },
  ) => {
    if (failNext > 0) {
      failNext--;
      throw new Error('transient failure');
    }
    await tx
      .insertInto('seen')
      .values({ event_id: event.id, subject: event.subject, data: JSON.stringify(event.data) })
      .execute();
  };
  probe = await startConsumer({
    bus: probeBus,
    db: probeDb,
    durable: 'probe-users',
    stream: 'users',
    ignore: [],
    handlers: probeHandlers(record),
  });
});

afterAll(async () => {
  await probe?.stop();
  await probeBus?.close();
  await probeDb?.destroy();
  await service?.stop();
  await space.drop(nats.url);
  await nats?.destroy();
});

const createUser = (email: string) =>
  call(service.runtime.bus, 'createUser', usersOperations.createUser, {
    actor: admin,
    params: undefined,
    query: undefined,
    body: { email, firstname: 'Bus', lastname: 'Test', language: 'en' },
    requestId: randomUUID(),
    url: '/test',
  });

test('the first start created the administrator and its event reached the consumer', async () => {
  await waitFor(async () => (await seen('users.user.created.v1')).length === 1, { what: 'admin created event' });
  expect((await seen('users.user.created.v1'))[0].data).toMatchObject({
    user: { email: 'admin@example.com', roles: expect.arrayContaining(['super_admin']) },
  });
});

test('events written while the relay is stopped are delivered when it runs again, once each', async () => {
  await service.runtime.relay.stop();
  const emails = ['relay1@example.com', 'relay2@example.com', 'relay3@example.com'];
  for (const email of emails) await createUser(email);
  const pending = await service.runtime.db.selectFrom('outbox').select('subject').execute();
  expect(pending.map((r) => r.subject)).toEqual(emails.map(() => 'users.user.created.v1'));
  const relay = startOutboxRelay({ db: service.runtime.db, bus: service.runtime.bus, databaseUrl, schema: 'users' });
  Object.assign(service.runtime, { relay });
  await waitFor(async () => (await seen('users.user.created.v1')).length === 4, { what: 'three events after the relay restarted' });
  const delivered = (await seen('users.user.created.v1')).map((e) => (e.data.user as { email: string }).email);
  expect(delivered.slice(1)).toEqual(emails);
  expect(await service.runtime.db.selectFrom('outbox').select('id').execute()).toEqual([]);
});

test('events written while NATS is down are delivered after it restarts; nothing is lost or doubled', async () => {
  const before = (await seen()).length;
  const failures = async () =>
    (await scrapeMetric(service.runtime.metricsUrl, 'kn_outbox_publish_failures_total')).get('{process="users"}') ?? 0;
  const failedBefore = await failures();
  await nats.stop();
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(1000 + i);
    await service.runtime.db
      .transaction()
      .execute((tx) => writeEvent(tx, 'users.user.deleted.v1', { user_id: 1000 + i }, { actorId: null }));
  }
  // The relay tried to publish them, and they are still in the outbox.
  await waitFor(async () => (await failures()) > failedBefore, { what: 'a failed publish' });
  expect((await service.runtime.db.selectFrom('outbox').select('id').execute()).length).toBe(5);
  await nats.restart();
  await waitFor(async () => (await seen()).length === before + 5, { timeoutMs: 30_000, what: 'five events after the NATS restart' });
  const deleted = (await seen('users.user.deleted.v1')).map((e) => e.data.user_id);
  expect(deleted).toEqual(ids);
  // Everything published before the restart is still handled exactly once.
  const all = await seen();
  expect(new Set(all.map((e) => e.event_id)).size).toBe(all.length);
  // And the service serves again over the restarted NATS.
  await waitFor(async () => (await createUser('after-restart@example.com')).email === 'after-restart@example.com', { timeoutMs: 15_000 });
});

test('an event delivered twice changes nothing the second time', async () => {
  const envelope = userDeleted(777);
  const subject = probeBus.subject('users.user.deleted.v1');
  // Two different message ids get past JetStream's deduplication: the stream holds it twice.
  await probeBus.js.publish(subject, JSON.stringify(envelope), { msgID: randomUUID() });
  await probeBus.js.publish(subject, JSON.stringify(envelope), { msgID: randomUUID() });
  await probe.caughtUp();
  expect((await seen()).filter((e) => e.event_id === envelope.id)).toHaveLength(1);
});

test('the same message id published twice is stored once', async () => {
  const envelope = userDeleted(778);
  const subject = probeBus.subject('users.user.deleted.v1');
  const first = await probeBus.js.publish(subject, JSON.stringify(envelope), { msgID: envelope.id });
  const second = await probeBus.js.publish(subject, JSON.stringify(envelope), { msgID: envelope.id });
  expect(first.duplicate).toBe(false);
  expect(second.duplicate).toBe(true);
});

test('a failing handler is retried until it succeeds, and then handled once', async () => {
  failNext = 2;
  const user = await createUser('retry@example.com');
  await waitFor(async () => (await seen('users.user.created.v1')).some((e) => (e.data.user as { id: number }).id === user.id), {
    timeoutMs: 20_000,
    what: 'the retried event',
  });
  expect(failNext).toBe(0);
  expect((await seen('users.user.created.v1')).filter((e) => (e.data.user as { id: number }).id === user.id)).toHaveLength(1);
});

test('an event whose payload breaks the catalogue is set aside and does not block the ones after it', async () => {
  const subject = probeBus.subject('users.user.deleted.v1');
  const bad = userDeleted('x');
  await probeBus.js.publish(subject, JSON.stringify(bad), { msgID: bad.id });
  await probeBus.js.publish(subject, 'not json at all', { msgID: randomUUID() });
  const good = userDeleted(779);
  await probeBus.js.publish(subject, JSON.stringify(good), { msgID: good.id });
  await probe.caughtUp();
  const ids = (await seen()).map((e) => e.event_id);
  expect(ids).toContain(good.id);
  expect(ids).not.toContain(bad.id);
});

test('a consumer stopped while it is still setting up its pull stops, also on a quiet stream', async () => {
  const start = () =>
    startConsumer({ bus: probeBus, db: probeDb, durable: 'probe-stop', stream: 'users', ignore: [], handlers: probeHandlers() });
  const first = await start();
  await first.caughtUp();
  await first.stop();
  // Nothing is waiting for this durable now: a pull that began after the stop would wait forever.
  const second = await start();
  await second.stop();
  await probeBus.jsm.consumers.delete(probeBus.streamName('users'), 'probe-stop');
}, 20_000);

test('a consumer with a filter is delivered only its subjects, and a durable made without one takes it where it stood', async () => {
  const delivered: string[] = [];
  const handlers = probeHandlers((async (_tx: unknown, event: { subject: string }) => {
    delivered.push(event.subject);
  }) as (...args: never[]) => Promise<void>);
  const start = (filter?: string) =>
    startConsumer({ bus: probeBus, db: probeDb, durable: 'probe-filter', stream: 'users', ignore: [], handlers, filter });
  const stream = probeBus.streamName('users');
  try {
    const whole = await start();
    await whole.caughtUp();
    await whole.stop();
    delivered.length = 0;
    const deleted = userDeleted(901);
    await probeBus.js.publish(probeBus.subject(deleted.subject), JSON.stringify(deleted), { msgID: deleted.id });
    await createUser('filtered@example.com');
    await service.runtime.relay.flush();
    // The stream's latest event (the user created) is one the filter leaves out: caught up all the same.
    const filtered = await start('users.user.deleted.v1');
    await filtered.caughtUp();
    await filtered.stop();
    expect((await probeBus.jsm.consumers.info(stream, 'probe-filter')).config.filter_subject).toBe(
      probeBus.subject('users.user.deleted.v1'),
    );
    expect(delivered).toEqual(['users.user.deleted.v1']);
  } finally {
    await probeBus.jsm.consumers.delete(stream, 'probe-filter').catch(() => {});
  }
}, 20_000);

test('every subject in the catalogue has a version suffix and belongs to a stream', () => {
  for (const subject of Object.keys(events) as EventSubject[])
    expect(subject).toMatch(/^(users|content|notifications|search|exports)\.[a-z-]+(\.[a-z-]+)+\.v\d+$/);
});

test('a request nobody serves is refused at once (no responders), one nobody answers times out, a late answer is dropped', async () => {
  const started = Date.now();
  await expect(probeBus.request(probeBus.subject('rpc.nobody.here'), '{}', { timeout: 5_000 })).rejects.toThrow(/no responders/);
  expect(Date.now() - started).toBeLessThan(4_000);
  const silent = probeBus.nc.subscribe(probeBus.subject('rpc.silent.here'));
  try {
    await expect(probeBus.request(probeBus.subject('rpc.silent.here'), '{}', { timeout: 200 })).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    // Answered after the caller gave up: nothing happens to the next request.
    for await (const msg of silent) {
      msg.respond('late');
      break;
    }
    const echo = probeBus.nc.subscribe(probeBus.subject('rpc.echo.here'), {
      callback: (_e, m) => {
        m.respond(m.data);
      },
    });
    const reply = await probeBus.request(probeBus.subject('rpc.echo.here'), 'hello', { timeout: 5_000 });
    expect(reply.string()).toBe('hello');
    echo.unsubscribe();
  } finally {
    silent.unsubscribe();
  }
});

test('a consumer with perTransaction handles a backlog in shared transactions, each event once, one that fails alone', async () => {
  // In the handlers' transactions: what a batch that failed wrote is rolled back with it.
  await sql`create table batch_seen (position serial primary key, user_id int not null, tx text not null)`.execute(probeDb);
  const handledRows = async () =>
    (await sql<{ user_id: number; tx: string }>`select user_id, tx from batch_seen order by position`.execute(probeDb)).rows;
  let handled: Array<{ user_id: number; tx: string }> = [];
  let failFor: number | null = 5003;
  const handlers = probeHandlers((async (tx: Kysely<any>, event: { subject: string; data: { user_id: number } }) => {
    if (event.subject !== 'users.user.deleted.v1' || event.data.user_id < 5000) return;
    if (event.data.user_id === failFor) {
      failFor = null;
      throw new Error('transient failure');
    }
    await sql`insert into batch_seen (user_id, tx) values (${event.data.user_id}, txid_current()::text)`.execute(tx);
  }) as (...args: never[]) => Promise<void>);
  const stream = probeBus.streamName('users');
  const subject = probeBus.subject('users.user.deleted.v1');
  // The backlog is in the stream before the consumer starts: it is delivered in one batch.
  const backlog = [5000, 5001, 5002, 5003, 5004, 5005].map(userDeleted);
  for (const e of backlog) await probeBus.js.publish(subject, JSON.stringify(e), { msgID: e.id });
  // Delivered twice (another message id): handled once.
  await probeBus.js.publish(subject, JSON.stringify(backlog[1]), { msgID: randomUUID() });
  const start = () =>
    startConsumer({
      bus: probeBus,
      db: probeDb,
      durable: 'probe-batch',
      stream: 'users',
      ignore: [],
      handlers,
      filter: 'users.user.deleted.v1',
      perTransaction: 10,
    });
  const consumer = await start();
  try {
    await waitFor(async () => (await handledRows()).some((h) => h.user_id === 5003), {
      timeoutMs: 20_000,
      what: 'the failed event, retried',
    });
    await consumer.caughtUp();
    handled = await handledRows();
    expect(handled.map((h) => h.user_id).sort()).toEqual([5000, 5001, 5002, 5003, 5004, 5005]);
    // The batch that failed on 5003 was handled again one at a time, in order, and 5003 alone later.
    const others = handled.filter((h) => h.user_id !== 5003);
    expect(others.map((h) => h.user_id)).toEqual([5000, 5001, 5002, 5004, 5005]);
    const failed = handled.find((h) => h.user_id === 5003)!;
    expect(others.map((h) => h.tx)).not.toContain(failed.tx);
    // Without a failure, the backlog shares a transaction.
    await sql`truncate batch_seen`.execute(probeDb);
    await consumer.stop();
    const more = [5100, 5101, 5102, 5103].map(userDeleted);
    for (const e of more) await probeBus.js.publish(subject, JSON.stringify(e), { msgID: e.id });
    const again = await start();
    await again.caughtUp();
    await again.stop();
    handled = await handledRows();
    expect(handled.map((h) => h.user_id)).toEqual([5100, 5101, 5102, 5103]);
    expect(new Set(handled.map((h) => h.tx)).size).toBe(1);
  } finally {
    await consumer.stop();
    await probeBus.jsm.consumers.delete(stream, 'probe-batch').catch(() => {});
    await sql`drop table if exists batch_seen`.execute(probeDb);
  }
}, 30_000);
