import { type Bus, ensureStream, eventBody, followStream, type StreamFollower } from '@kn/bus';
import type { ServiceName } from '@kn/contracts';
import type { JsMsg } from '@nats-io/jetstream';
import { applyEvent, type IndexHandlers } from '../core/events.ts';
import type { SearchStore } from './store.ts';

/** Events applied in one SQLite transaction during catch-up. */
const BATCH = 500;

export interface LocalFeed {
  /** True once every stream was read up to where it stood when the feed started. */
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
export async function startLocalFeed(options: {
  bus: Bus;
  store: SearchStore;
  streams: ServiceName[];
  handlers: IndexHandlers;
}): Promise<LocalFeed> {
  const { bus, store } = options;
  const log = bus.logger.child({ component: 'search-feed' });
  let trimmed = false;
  /** Per stream: the last position applied, the catch-up's target, and how many events were waiting after it. */
  const state = new Map<ServiceName, { applied: number; target: number; waiting: number; follower?: StreamFollower }>();
  const ready = () => [...state.values()].every((s) => s.applied >= s.target);
  let waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const settle = () => {
    const still: typeof waiters = [];
    for (const w of waiters) w.done() ? w.resolve() : still.push(w);
    waiters = still;
  };

  async function apply(stream: ServiceName, messages: JsMsg[]) {
    // Bodies (a large one's from the object store) are read before the batch's transaction, which
    // is synchronous; one that cannot be read now fails the batch, read again after the resume.
    const bodies = await Promise.all(messages.map((msg) => eventBody(bus, stream, msg)));
    const last = messages[messages.length - 1]!.info.streamSequence;
    store.transaction(() => {
      for (const [i, msg] of messages.entries()) {
        const body = bodies[i]!;
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
    entry.waiting = messages[messages.length - 1]!.info.pending;
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

  function follow(stream: ServiceName): StreamFollower {
    const entry = state.get(stream)!;
    return followStream({
      bus,
      consumer: () => bus.js.consumers.get(bus.streamName(stream), { opt_start_seq: entry.applied + 1 }),
      pull: BATCH * 2,
      batch: BATCH,
      apply: (messages) => apply(stream, messages),
      what: 'index feed',
      log: log.child({ stream }),
    });
  }

  for (const stream of options.streams) {
    await ensureStream(bus, stream);
    const info = await bus.jsm.streams.info(bus.streamName(stream));
    const applied = store.position(bus.streamName(stream));
    if (applied > info.state.last_seq)
      throw new Error(`the search index is ahead of stream ${stream} (${applied} > ${info.state.last_seq}): rebuild it`);
    state.set(stream, { applied, target: info.state.last_seq, waiting: 0 });
  }
  for (const stream of options.streams) state.get(stream)!.follower = follow(stream);
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
      await Promise.all([...state.values()].map((s) => s.follower?.stop()));
      for (const w of waiters) w.resolve();
    },
  };
}
