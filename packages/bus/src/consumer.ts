import { EventEnvelope, type EventSubject, events, type ServiceName, type StreamSubject, streams, unlistedSubjects } from '@kn/contracts';
import { transaction } from '@kn/db';
import { SpanKind, withRemoteSpan } from '@kn/telemetry';
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Kysely, Transaction } from 'kysely';
import { type Bus, ensureStream } from './connection.ts';
import { followStream } from './follow.ts';
import { eventBody } from './large-payloads.ts';
import { backoff } from './loops.ts';
import type { BusTables } from './tables.ts';

export type EventHandler<S extends EventSubject> = (tx: Transaction<any>, event: EventEnvelope<S>) => Promise<void>;
/**
 * A handler for every subject of the stream `St` but those the consumer ignores (`Ignored`): an
 * event added to the catalogue fails type-checking in every consumer of its stream until each
 * handles it or says that it ignores it.
 */
export type EventHandlers<St extends ServiceName, Ignored extends StreamSubject<St> = never> = {
  [S in Exclude<StreamSubject<St>, Ignored>]: EventHandler<S>;
};

/** When a message that failed is delivered again: later after each failure, so a failing dependency is not hammered. */
const redelivery = (msg: JsMsg) => backoff(msg.info.deliveryCount, 500, 30_000);

export interface Consumer {
  /** Resolves once every event of its subjects that was in the stream at call time has been handled. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A durable JetStream consumer of one service's stream. Each event is handled in a Postgres
 * transaction (its own, or its batch's: `perTransaction`) that also records its id in
 * `processed_events`: a redelivered event finds its id and changes nothing. The message is
 * acknowledged only after that transaction commits. A payload that does not match the catalogue
 * is terminated (it can never succeed); any other failure is retried with backoff. Instances of a
 * service share the durable, so each event is handled once.
 */
export async function startConsumer<St extends ServiceName, const Ignored extends StreamSubject<St> = never>(options: {
  bus: Bus;
  db: Kysely<any>;
  /** Durable name, for example `notifications-content`. */
  durable: string;
  stream: St;
  /** The subjects of the stream this consumer does not act on: acknowledged and skipped. */
  ignore: readonly Ignored[];
  handlers: EventHandlers<St, Ignored>;
  /**
   * The stream's subjects the consumer is delivered (one subject or wildcard: NATS 2.9 allows one
   * filter); the whole stream by default. A consumer that acts on few subjects of a busy stream
   * names them here, so that the rest never travels to it: a bulk import is a million events.
   */
  filter?: string;
  /**
   * Events handled at once, each in its own transaction (1 by default: in stream order). Only for
   * a consumer whose events are independent of each other's order (each a decision of its own):
   * under load an event waits mostly for its round trips to Postgres, which then overlap.
   */
  concurrency?: number;
  /**
   * Events handled in one transaction, in stream order (1 by default). For a consumer whose
   * handlers are a few cheap writes each, so that a catch-up (a million imported questions) is not
   * one commit an event; not with `concurrency`. When a batch fails, its events are handled again
   * one at a time, so that one event's failure holds back only itself.
   */
  perTransaction?: number;
}): Promise<Consumer> {
  const { bus } = options;
  // What the types say, checked once more for callers that cast.
  const unlisted = unlistedSubjects(options.stream, options.handlers, options.ignore);
  if (unlisted.length) throw new Error(`consumer ${options.durable} neither handles nor ignores ${unlisted.join(', ')}`);
  if ((options.concurrency ?? 1) > 1 && (options.perTransaction ?? 1) > 1)
    throw new Error(`consumer ${options.durable} takes concurrency or perTransaction, not both`);
  const db = options.db as Kysely<BusTables>;
  const stream = bus.streamName(options.stream);
  const log = bus.logger.child({ consumer: options.durable });
  // The publishing service normally creates its stream; a consumer that starts first creates the
  // same stream itself rather than failing.
  await ensureStream(bus, options.stream);
  const filter = bus.subject(options.filter ?? streams[options.stream].subjects);
  const existing = await bus.jsm.consumers.info(stream, options.durable).catch(() => null);
  if (!existing)
    await bus.jsm.consumers
      .add(stream, {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: filter,
        ack_wait: nanos(30_000),
        max_deliver: -1,
      })
      .catch((err) => {
        if (!String(err.message).includes('already in use')) throw err;
      });
  // A durable made by an earlier version with another filter keeps its place and takes the new one.
  else if (existing.config.filter_subject !== filter) await bus.jsm.consumers.update(stream, options.durable, { filter_subject: filter });

  bus.metrics.gauge(
    'kn_consumer_pending_events',
    'Events of a durable consumer not yet handled (delivered and unacknowledged included): its lag',
    ['consumer'],
    async (set) => {
      const info = await bus.jsm.consumers.info(stream, options.durable);
      set({ consumer: options.durable }, info.num_pending + info.num_ack_pending);
    },
  );
  const counted = (outcome: 'handled' | 'duplicate' | 'failed' | 'rejected') =>
    bus.metrics.events.inc({ consumer: options.durable, outcome });
  let lastHandledSeq = 0;
  let waiters: Array<{ seq: number; resolve: () => void }> = [];
  const settle = () => {
    const done = waiters.filter((w) => w.seq <= lastHandledSeq);
    waiters = waiters.filter((w) => w.seq > lastHandledSeq);
    for (const w of done) w.resolve();
  };

  /** An event to hand to its handler: parsed and checked against the catalogue. */
  interface Parsed {
    msg: JsMsg;
    envelope: EventEnvelope;
    handler: EventHandler<EventSubject>;
  }

  /**
   * The event of a message, or null when the message is settled already: acknowledged (a subject
   * the consumer ignores), terminated (it can never succeed) or to be delivered again (its body
   * could not be read now).
   */
  async function parse(msg: JsMsg): Promise<Parsed | null> {
    // Subjects the consumer ignores, and newer ones than this process knows, are skipped by their
    // subject alone: an ignored event is not even parsed (a bulk import is a million of them).
    const handler = (options.handlers as Partial<Record<EventSubject, EventHandler<EventSubject>>>)[
      bus.unprefix(msg.subject) as EventSubject
    ];
    if (!handler) {
      msg.ack();
      return null;
    }
    let body: Awaited<ReturnType<typeof eventBody>>;
    try {
      body = await eventBody(bus, options.stream, msg);
    } catch (err) {
      // A large event's body could not be read from the object store now: not the event's fault.
      counted('failed');
      log.warn({ err, seq: msg.seq }, 'event body could not be read; will retry');
      msg.nak(redelivery(msg));
      return null;
    }
    let envelope: EventEnvelope;
    try {
      envelope = EventEnvelope.parse(body.json()) as EventEnvelope;
    } catch (err) {
      log.error({ err, seq: msg.seq }, 'event is not an envelope; terminated');
      msg.term();
      counted('rejected');
      return null;
    }
    const subject = envelope.subject as EventSubject;
    if (bus.subject(subject) !== msg.subject) {
      log.error({ subject, id: envelope.id, on: msg.subject }, 'event says another subject than it was published on; terminated');
      msg.term();
      counted('rejected');
      return null;
    }
    const parsed = events[subject]?.safeParse(envelope.data);
    if (!parsed?.success) {
      log.error({ subject, id: envelope.id, issues: parsed?.error.issues }, 'event payload does not match the catalogue; terminated');
      msg.term();
      counted('rejected');
      return null;
    }
    envelope.data = parsed.data;
    return { msg, envelope, handler };
  }

  /**
   * Handles events in one transaction that also records their ids in `processed_events`: an event
   * whose id is there already (delivered again) changes nothing. Throws when the transaction fails.
   * Its span continues the first event's trace.
   */
  async function handleTogether(batch: readonly Parsed[]) {
    const first = batch[0]!;
    const name = batch.length === 1 ? `consume ${first.envelope.subject}` : `consume ${batch.length} events of ${options.stream}`;
    const outcomes = await withRemoteSpan(
      name,
      SpanKind.CONSUMER,
      (k) => first.msg.headers?.get(k) || undefined,
      () =>
        transaction(db, async (tx) => {
          const fresh = new Set(
            (
              await tx
                .insertInto('processed_events')
                .values(batch.map((p) => ({ consumer: options.durable, event_id: p.envelope.id })))
                .onConflict((c) => c.doNothing())
                .returning('event_id')
                .execute()
            ).map((r) => r.event_id),
          );
          const out: Array<'handled' | 'duplicate'> = [];
          for (const p of batch) {
            // The same event twice in one batch is handled once.
            const handled = fresh.delete(p.envelope.id);
            if (handled) await p.handler(tx, p.envelope);
            out.push(handled ? 'handled' : 'duplicate');
          }
          return out;
        }),
    );
    for (const [i, p] of batch.entries()) {
      counted(outcomes[i]!);
      p.msg.ack();
    }
  }

  /** Handles one event; a failure is retried later with backoff. */
  async function handleAlone(parsed: Parsed) {
    try {
      await handleTogether([parsed]);
    } catch (err) {
      counted('failed');
      const delay = redelivery(parsed.msg);
      const { subject, id } = parsed.envelope;
      log.warn({ err, subject, id, attempt: parsed.msg.info.deliveryCount, delay }, 'event handling failed; will retry');
      parsed.msg.nak(delay);
    }
  }

  /** Handles messages: each in a transaction of its own at once (`concurrency`), or together (`perTransaction`). */
  async function handle(msgs: readonly JsMsg[]) {
    const parsed = (await Promise.all(msgs.map(parse))).filter((p): p is Parsed => p !== null);
    if (parsed.length <= 1 || (options.perTransaction ?? 1) <= 1) {
      await Promise.all(parsed.map(handleAlone));
      return;
    }
    try {
      await handleTogether(parsed);
    } catch (err) {
      log.warn({ err, events: parsed.length }, 'events handled together failed; handling them one at a time');
      for (const p of parsed) await handleAlone(p);
    }
  }

  const batch = Math.max(options.concurrency ?? 1, options.perTransaction ?? 1);
  const follower = followStream({
    bus,
    consumer: () => bus.js.consumers.get(stream, options.durable),
    // Small pulls: the instances sharing the durable take turns (a large pull would hold every
    // event of a quiet stream for one instance), and a stopped instance leaves few messages to
    // redeliver.
    pull: Math.max(10, 2 * batch),
    batch,
    apply: async (msgs) => {
      await handle(msgs);
      for (const msg of msgs) lastHandledSeq = Math.max(lastHandledSeq, msg.info.streamSequence);
      settle();
    },
    what: 'consumer',
    log,
  });

  return {
    caughtUp: async () => {
      // The latest event this consumer is delivered (with a filter, the stream's latest may be one it never sees).
      const seq = options.filter
        ? ((await bus.jsm.streams.getMessage(stream, { last_by_subj: filter }))?.seq ?? 0)
        : (await bus.jsm.streams.info(stream)).state.last_seq;
      if (seq <= lastHandledSeq) return;
      await new Promise<void>((resolve) => {
        waiters.push({ seq, resolve });
        settle();
      });
    },
    stop: async () => {
      await follower.stop();
      for (const w of waiters) w.resolve();
    },
  };
}
