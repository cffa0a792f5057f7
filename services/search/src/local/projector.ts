import { type Bus, ensureStream, eventBody, stopWhenStale } from '@kn/bus';
import type { ServiceName } from '@kn/contracts';
import type { JsMsg } from '@nats-io/jetstream';
import { applyEvent, type IndexHandlers } from './events.ts';
import type { SearchStore } from './store.ts';

/** Events applied in one SQLite transaction during catch-up. */
const BATCH = 500;

export interface Projector {
  /** True once every stream was read up to where it stood when the projector started. */
  ready(): boolean;
  /** Resolves once every event in the streams at call time has been applied. */
  caughtUp(): Promise<void>;
  /** Stream positions: applied, and the target of the initial catch-up. */
  status(): Record<string, { applied: number; target: number }>;
  stop(): Promise<void>;
}

/**
 * Feeds the instance's own index from the event streams. Each instance reads every event (its
 * index is its own), so it uses an ordered consumer that starts after the position stored in the
 * index: nothing to acknowledge, nothing shared between instances, and a restart resumes exactly
 * where the index stands. Events are applied in batches, each batch and its new position in one
 * SQLite transaction.
 */
export async function startProjector(options: {
  bus: Bus;
  store: SearchStore;
  streams: ServiceName[];
  handlers: IndexHandlers;
}): Promise<Projector> {
  const { bus, store } = options;
  const log = bus.logger.child({ component: 'search-projector' });
  let stopped = false;
  let trimmed = false;
  /** Per stream: the last position applied, the catch-up's target, and how many events were waiting after it. */
  const state = new Map<ServiceName, { applied: number; target: number; waiting: number; stop: () => void; run: Promise<void> }>();
  const ready = () => [...state.values()].every((s) => s.applied >= s.target);
  let waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const settle = () => {
    const still: typeof waiters = [];
    for (const w of waiters) w.done() ? w.resolve() : still.push(w);
    waiters = still;
  };

  /** Events read (a large one's body from the object store) before their batch's transaction, which is synchronous. */
  type Read = { msg: JsMsg; body: { json(): unknown } };

  function apply(stream: ServiceName, messages: Read[]) {
    if (!messages.length) return;
    const last = messages[messages.length - 1]!.msg.info.streamSequence;
    store.transaction(() => {
      for (const { msg, body } of messages) {
        try {
          store.attempt(() => applyEvent(options.handlers, store, body.json()));
        } catch (err) {
          // A projection must not stop on one event it cannot apply: it is logged, and a rebuild
          // after the fix applies it.
          log.error({ err, seq: msg.info.streamSequence, subject: msg.subject }, 'event could not be applied to the search index; skipped');
        }
      }
      store.setPosition(bus.streamName(stream), last);
    });
    const entry = state.get(stream)!;
    entry.applied = last;
    entry.waiting = messages[messages.length - 1]!.msg.info.pending;
    afterApplied();
    settle();
  }

  function afterApplied() {
    // The initial catch-up is done: the index gives back the room its lists grew into.
    if (!trimmed && ready()) {
      trimmed = true;
      store.index.trim();
    }
    // Topic vectors are trained once caught up, and again as the network grows (in slices, between
    // events), not while many events wait (store.refreshTopics).
    if (trimmed)
      store
        .refreshTopics([...state.values()].reduce((sum, s) => sum + s.waiting, 0))
        .catch((err) => log.error({ err }, 'topic vectors could not be trained; searches go on without them'));
  }

  async function follow(stream: ServiceName) {
    const entry = state.get(stream)!;
    while (!stopped) {
      try {
        const consumer = await bus.js.consumers.get(bus.streamName(stream), { opt_start_seq: entry.applied + 1 });
        // Short pulls: when the node that holds this ephemeral consumer stops (a cluster), the missed
        // heartbeats (every expires/2) make the client recreate it within seconds, not half a minute.
        const messages = await consumer.consume({ max_messages: BATCH * 2, expires: 5_000 });
        stopWhenStale(bus, messages);
        entry.stop = () => messages.stop();
        // A stop asked while the pull was being set up found nothing to stop (a quiet stream would keep it).
        if (stopped) messages.stop();
        let batch: Read[] = [];
        for await (const msg of messages) {
          // A body that cannot be read now ends this pull: the next one starts again after what was applied.
          batch.push({ msg, body: await eventBody(bus, stream, msg) });
          // Commit when the batch is full or nothing more is waiting: catch-up runs in large
          // transactions, live updates are visible at once.
          if (batch.length >= BATCH || msg.info.pending === 0) {
            apply(stream, batch);
            batch = [];
          }
          if (stopped) break;
        }
        apply(stream, batch);
      } catch (err) {
        if (!stopped) log.warn({ err: (err as Error).message, stream }, 'index feed interrupted; resuming');
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 500));
    }
  }

  for (const stream of options.streams) {
    await ensureStream(bus, stream);
    const info = await bus.jsm.streams.info(bus.streamName(stream));
    const applied = store.position(bus.streamName(stream));
    if (applied > info.state.last_seq)
      throw new Error(`the search index is ahead of stream ${stream} (${applied} > ${info.state.last_seq}): rebuild it`);
    state.set(stream, { applied, target: info.state.last_seq, waiting: 0, stop: () => {}, run: Promise.resolve() });
  }
  for (const stream of options.streams) state.get(stream)!.run = follow(stream);
  // An index that was already up to date (a restart) gets its topic vectors now, not at the next event.
  afterApplied();

  return {
    ready,
    caughtUp: async () => {
      const targets = new Map<ServiceName, number>();
      for (const stream of state.keys()) targets.set(stream, (await bus.jsm.streams.info(bus.streamName(stream))).state.last_seq);
      const done = () => [...targets].every(([stream, seq]) => state.get(stream)!.applied >= seq);
      if (done()) return;
      await new Promise<void>((resolve) => {
        waiters.push({ done, resolve });
      });
    },
    status: () => Object.fromEntries([...state].map(([stream, s]) => [stream, { applied: s.applied, target: s.target }])),
    stop: async () => {
      stopped = true;
      for (const s of state.values()) s.stop();
      await Promise.all([...state.values()].map((s) => s.run));
      for (const w of waiters) w.resolve();
    },
  };
}
