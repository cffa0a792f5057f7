import type { Logger } from '@kn/telemetry';
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Bus } from './connection.ts';
import { sleeper } from './loops.ts';

/**
 * Ends a `consume()` whose pulls may be lost, so that the caller's loop consumes again from its own
 * position: after the connection moved to another server (the client's own recovery can stall
 * when the node that held the consumer is gone) and after two missed heartbeats.
 */
function stopWhenStale(bus: Bus, messages: ConsumerMessages): void {
  const connection = bus.nc.status() as AsyncIterable<{ type: string }> & { stop(): void };
  void messages.closed().then(() => connection.stop());
  void (async () => {
    for await (const s of connection)
      if (s.type === 'reconnect') {
        messages.stop();
        return;
      }
  })();
  void (async () => {
    for await (const s of messages.status())
      if (s.type === 'heartbeats_missed' && s.count >= 2) {
        messages.stop();
        return;
      }
  })();
}

export interface StreamFollower {
  stop(): Promise<void>;
}

/** The pause before consuming again after a pull ended or failed: long enough not to spin on a server that refuses. */
const RESUME_MS = 500;

/**
 * Reads a stream through a JetStream consumer until stopped, handing its messages to `apply` in
 * batches of at most `batch`. A batch is also applied as soon as nothing more is waiting: a
 * catch-up runs in large batches, a live event is applied at once (`live`), and events that came
 * while an apply ran are applied together. When the pull ends or
 * fails (a lost connection, a cluster node gone, an `apply` that threw) it is logged and the
 * follower consumes again from where `consumer()` then starts: a durable from its own position, an
 * ordered consumer from the position it is given. A message that was read into a batch not
 * applied is read again then.
 */
export function followStream(options: {
  bus: Bus;
  /** The consumer to read, asked for again at every resume. */
  consumer: () => Promise<Consumer>;
  /** Messages one pull asks for. */
  pull: number;
  batch: number;
  apply: (messages: JsMsg[], live: boolean) => Promise<void> | void;
  /** Names the follower in the log line of a resume (`what` interrupted; resuming). */
  what: string;
  log: Logger;
}): StreamFollower {
  const { bus } = options;
  const pause = sleeper();
  let stopConsuming = () => {};

  const run = (async () => {
    while (!pause.stopped) {
      try {
        const consumer = await options.consumer();
        // Short pulls: a pull lost with a cluster node is noticed (missed heartbeats) within seconds.
        const messages = await consumer.consume({ max_messages: options.pull, expires: 5_000 });
        stopWhenStale(bus, messages);
        stopConsuming = () => messages.stop();
        // A stop asked while the pull was being set up found nothing to stop (a quiet stream would keep it).
        if (pause.stopped) messages.stop();
        let batch: JsMsg[] = [];
        for await (const msg of messages) {
          batch.push(msg);
          // Nothing more waits: in the stream, nor received here already (a follower behind live
          // writes receives each with nothing pending in the stream; they make one batch all the same).
          // Not getPending(): it counts the client's own pull requests too.
          const last = msg.info.pending === 0 && messages.getReceived() === messages.getProcessed();
          if (batch.length >= options.batch || last) {
            await options.apply(batch, last);
            batch = [];
          }
          if (pause.stopped) break;
        }
        if (batch.length) await options.apply(batch, true);
      } catch (err) {
        if (!pause.stopped) options.log.warn({ err: (err as Error).message }, `${options.what} interrupted; resuming`);
      }
      await pause.sleep(RESUME_MS);
    }
  })();

  return {
    stop: async () => {
      pause.stop();
      stopConsuming();
      await run;
    },
  };
}
