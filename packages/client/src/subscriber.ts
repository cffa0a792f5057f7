import {
  EventEnvelope,
  type EventSubject,
  events,
  inboxPrefix,
  namespaced,
  PAYLOAD_HEADER,
  payloadBuckets,
  type ServiceName,
  type StreamSubject,
  streams,
  unlistedSubjects,
} from '@kn/contracts';
import { AckPolicy, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type ObjectStore, Objm } from '@nats-io/obj';
import { connect, nanos } from '@nats-io/transport-node';

/*
 * A typed subscriber of the domain events for internal systems (docs/events.md,
 * docs/asyncapi.json): a durable JetStream consumer of one service's stream, each payload
 * validated against the catalogue, a handler for every subject of the stream (or the subject named
 * as ignored, so that the compiler says when a new event appears), acknowledged once its handler
 * is done. Works as the read-only NATS user `subscriber` of a locked deployment.
 */

export type SubscriberHandler<S extends EventSubject> = (event: EventEnvelope<S>) => Promise<void> | void;
/** A handler for every subject of the stream `St` but the ignored ones. */
export type SubscriberHandlers<St extends ServiceName, Ignored extends StreamSubject<St> = never> = {
  [S in Exclude<StreamSubject<St>, Ignored>]: SubscriberHandler<S>;
};

export interface SubscribeOptions<St extends ServiceName, Ignored extends StreamSubject<St>> {
  /** The NATS server(s): `nats://127.0.0.1:4222`, a comma list for a cluster. */
  url: string;
  /** The NATS user (`subscriber` on a locked bus) and its password; replies then come to its own inbox prefix. */
  user?: string;
  password?: string;
  /** The deployment's NATS_NAMESPACE, when it has one. */
  namespace?: string;
  /** The service whose events to read: `content`, `users`, … */
  stream: St;
  /** The durable consumer's name: a new start goes on where the last stopped; processes sharing it share the events. */
  durable: string;
  /** Where a new durable consumer begins: every event the stream keeps (default), or the ones from now on. */
  from?: 'all' | 'new';
  /** Subjects of the stream this subscriber does not act on: acknowledged and skipped. */
  ignore: readonly Ignored[];
  handlers: SubscriberHandlers<St, Ignored>;
  /** Told of every event that is not handled: `invalid` (terminated, never redelivered) or `failed` (redelivered later). */
  onProblem?: (problem: { kind: 'invalid' | 'failed'; subject: string; id?: string; error: unknown }) => void;
}

export interface Subscription {
  /** Resolves once every event in the stream at call time has been handled or skipped. */
  caughtUp(): Promise<void>;
  /** Stops taking events (the one being handled is finished) and closes the connection. */
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

/** Starts a subscription; see `SubscribeOptions`. */
export async function subscribe<St extends ServiceName, const Ignored extends StreamSubject<St> = never>(
  options: SubscribeOptions<St, Ignored>,
): Promise<Subscription> {
  const unlisted = unlistedSubjects(options.stream, options.handlers, options.ignore);
  if (unlisted.length) throw new Error(`the subscriber ${options.durable} neither handles nor ignores ${unlisted.join(', ')}`);
  const names = namespaced(options.namespace);
  const stream = names.streamName(options.stream);
  const nc = await connect({
    servers: options.url.split(',').map((u) => u.trim()),
    ...(options.user ? { user: options.user, pass: options.password, inboxPrefix: inboxPrefix(options.user) } : {}),
    name: `subscriber ${options.durable}`,
    maxReconnectAttempts: -1,
  });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.info(stream, options.durable).catch(() =>
      jsm.consumers.add(stream, {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: options.from === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        filter_subject: names.subject(streams[options.stream].subjects),
        ack_wait: nanos(30_000),
        max_deliver: -1,
      }),
    );
    const js = jetstream(nc);
    const consumer = await js.consumers.get(stream, options.durable);
    // An event too large for a NATS message has its body in the stream's object store, named by a header.
    let bodies: Promise<ObjectStore> | undefined;
    const bodyOf = async (msg: JsMsg) => {
      const name = msg.headers?.get(PAYLOAD_HEADER);
      if (!name) return msg.data;
      bodies ??= new Objm(js).open(payloadBuckets(stream).events).catch((err) => {
        bodies = undefined;
        throw err;
      });
      const body = await (await bodies).getBlob(name);
      if (!body) throw new Error(`the body ${name} of the event is not in the object store`);
      return body;
    };
    const messages = await consumer.consume({ max_messages: 10, expires: 5_000 });
    let lastSeq = 0;
    let waiters: Array<{ seq: number; resolve: () => void }> = [];
    const settle = () => {
      const done = waiters.filter((w) => w.seq <= lastSeq);
      waiters = waiters.filter((w) => w.seq > lastSeq);
      for (const w of done) w.resolve();
    };
    const handle = async (msg: JsMsg) => {
      let body: Uint8Array;
      try {
        body = await bodyOf(msg);
      } catch (error) {
        options.onProblem?.({ kind: 'failed', subject: names.unprefix(msg.subject), error });
        return msg.nak(Math.min(500 * 2 ** (msg.info.deliveryCount - 1), 30_000));
      }
      const envelope = EventEnvelope.safeParse(JSON.parse(decoder.decode(body)));
      const subject = (envelope.success ? envelope.data.subject : names.unprefix(msg.subject)) as EventSubject;
      const schema = events[subject];
      const payload = envelope.success && schema ? schema.safeParse(envelope.data.data) : undefined;
      if (!envelope.success || !schema || !payload?.success) {
        // Not an event of the catalogue this process knows: a newer version, or garbage. It can never succeed.
        if (envelope.success && !schema) return msg.ack();
        options.onProblem?.({ kind: 'invalid', subject, id: envelope.data?.id, error: envelope.error ?? payload?.error });
        return msg.term();
      }
      const handler = (options.handlers as Partial<Record<EventSubject, SubscriberHandler<EventSubject>>>)[subject];
      if (!handler) return msg.ack();
      try {
        await handler({ ...envelope.data, subject, data: payload.data } as EventEnvelope);
        msg.ack();
      } catch (error) {
        options.onProblem?.({ kind: 'failed', subject, id: envelope.data.id, error });
        msg.nak(Math.min(500 * 2 ** (msg.info.deliveryCount - 1), 30_000));
      }
    };
    const running = (async () => {
      for await (const msg of messages) {
        await handle(msg);
        lastSeq = Math.max(lastSeq, msg.info.streamSequence);
        settle();
      }
    })();
    return {
      async caughtUp() {
        const seq = (await jsm.streams.info(stream)).state.last_seq;
        if (seq <= lastSeq) return;
        await new Promise<void>((resolve) => {
          waiters.push({ seq, resolve });
          settle();
        });
      },
      async stop() {
        messages.stop();
        await running;
        for (const w of waiters) w.resolve();
        await nc.drain();
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
