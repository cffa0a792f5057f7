import { randomUUID } from 'node:crypto';
import { type EventEnvelope, type EventPayload, type EventSubject, events, streamOf } from '@kn/contracts';
import { injectTraceContext } from '@kn/telemetry';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { type Kysely, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Bus } from './connection.ts';
import { outgoingBody } from './large-payloads.ts';
import { backoff, sleeper } from './loops.ts';
import { recordRequestKey } from './request-keys.ts';
import type { BusTables } from './tables.ts';

/** One channel for all services; the payload names the schema whose outbox has news. */
const CHANNEL = 'kn_outbox';
const encoder = new TextEncoder();

/**
 * Writes an event into the outbox in the caller's transaction, so the event exists exactly when
 * the change does. The payload is checked against the catalogue here: a service can never publish
 * an event its subscribers cannot parse. The NOTIFY is delivered by Postgres only on commit and
 * wakes the relay of every instance. The request's Idempotency-Key, if it has one, is recorded in
 * the same transaction (request-keys.ts).
 */
export async function writeEvent<S extends EventSubject>(
  tx: Transaction<any>,
  subject: S,
  data: EventPayload<S>,
  options: { actorId: number | null },
): Promise<EventEnvelope<S>> {
  const payload = events[subject].parse(data) as EventPayload<S>;
  const envelope: EventEnvelope<S> = {
    id: randomUUID(),
    subject,
    occurred_at: new Date().toISOString(),
    actor_id: options.actorId,
    data: payload,
  };
  const trace: Record<string, string> = {};
  injectTraceContext((k, v) => {
    trace[k] = v;
  });
  await (tx as Transaction<BusTables>)
    .insertInto('outbox')
    .values({
      id: envelope.id,
      subject,
      payload: JSON.stringify(payload),
      actor_id: options.actorId,
      occurred_at: new Date(envelope.occurred_at),
      trace_context: JSON.stringify(trace),
    })
    .execute();
  await recordRequestKey(tx);
  await sql`select pg_notify(${CHANNEL}, current_schema())`.execute(tx);
  return envelope;
}

export interface OutboxRelay {
  /** Publishes everything pending now; resolves when the outbox was empty at some point. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Drains the outbox to JetStream: rows are locked with SKIP LOCKED (several instances share the
 * work), published in order with the event id as message id (a row published twice after a crash
 * between publish and delete is deduplicated by JetStream), and deleted once acknowledged.
 */
export function startOutboxRelay(options: {
  db: Kysely<any>;
  bus: Bus;
  databaseUrl: string;
  schema: string;
  batchSize?: number;
  /** Fallback poll when a notification is missed (for example during a reconnect). */
  pollMs?: number;
}): OutboxRelay {
  const db = options.db as Kysely<BusTables>;
  const { bus } = options;
  const log = bus.logger.child({ component: 'outbox-relay' });
  let listener: pg.Client | undefined;
  let idleWaiters: Array<() => void> = [];
  // Woken by a notification, cleared before each batch: news that arrives while a batch is being
  // published must not wait for the fallback poll.
  const idle = sleeper();
  // The listener's own pause before it connects again, which news must not cut short.
  const reconnect = sleeper();

  // Resolved by stop(): every wait of the listener also ends on it, so nothing outlives stop().
  let signalStop = () => {};
  const stopping = new Promise<void>((resolve) => {
    signalStop = resolve;
  });

  async function listen() {
    while (!idle.stopped) {
      const client = new pg.Client({ connectionString: options.databaseUrl });
      listener = client;
      const ended = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        client.on('notification', (n: pg.Notification) => {
          if (n.payload === options.schema) idle.wake();
        });
        if (!idle.stopped) await client.query(`listen ${CHANNEL}`);
        // What was committed while nobody listened is looked for now.
        idle.wake();
        await Promise.race([ended, stopping]);
      } catch (err) {
        if (!idle.stopped) log.warn({ err }, 'outbox listener failed; retrying');
      }
      await client.end().catch(() => {});
      await reconnect.sleep(1000);
    }
    listener = undefined;
  }

  /** Publishes one batch; returns how many rows it published. */
  async function publishBatch(): Promise<number> {
    return db.transaction().execute(async (tx) => {
      const rows = await tx
        .selectFrom('outbox')
        .selectAll()
        .orderBy('position')
        .limit(options.batchSize ?? 100)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return 0;
      const acked: number[] = [];
      try {
        for (const row of rows) {
          const h = natsHeaders();
          for (const [k, v] of Object.entries(row.trace_context ?? {})) h.set(k, v);
          const envelope = {
            id: row.id,
            subject: row.subject,
            occurred_at: row.occurred_at.toISOString(),
            actor_id: row.actor_id,
            data: row.payload,
          };
          // An event larger than a message goes to the object store first, named by its id: a
          // republished event writes the same object again.
          const body = await outgoingBody(
            bus,
            streamOf(row.subject as EventSubject),
            'events',
            encoder.encode(JSON.stringify(envelope)),
            h,
            row.id,
          );
          await bus.js.publish(bus.subject(row.subject), body, { msgID: row.id, headers: h, timeout: 5000 });
          acked.push(row.position);
        }
      } finally {
        // What was acknowledged is deleted even when a later publish failed.
        if (acked.length) await tx.deleteFrom('outbox').where('position', 'in', acked).execute();
      }
      return acked.length;
    });
  }

  const loop = (async () => {
    let failures = 0;
    while (!idle.stopped) {
      let published = 0;
      // Only a pass that began after a flush was asked for can tell it nothing is left: a pass that
      // read the outbox before the caller's row was committed finds nothing, and said so too early.
      const waiting = idleWaiters;
      idleWaiters = [];
      try {
        idle.clear();
        published = await publishBatch();
        failures = 0;
      } catch (err) {
        failures++;
        bus.metrics.outboxFailures.inc();
        log.warn({ err: (err as Error).message, failures }, 'outbox publish failed; will retry');
      }
      if (published === 0 && failures === 0) for (const w of waiting) w();
      else idleWaiters.unshift(...waiting);
      if (published === 0) await idle.sleep(failures ? backoff(failures, 200, 5000) : (options.pollMs ?? 1000));
    }
  })();
  const listening = listen();

  return {
    flush: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        idle.wake();
      }),
    stop: async () => {
      idle.stop();
      reconnect.stop();
      signalStop();
      await loop;
      await listener?.end().catch(() => {});
      await listening;
      for (const w of idleWaiters) w();
    },
  };
}
