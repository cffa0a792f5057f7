import { type Bus, ensureStream, eventBody, followStream, type StreamFollower } from '@kn/bus';
import { EventEnvelope, type EventSubject, events, type ServiceName, unlistedSubjects } from '@kn/contracts';
import { sql, transaction } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { JsMsg } from '@nats-io/jetstream';
import type { Kysely } from 'kysely';
import { contentHandlers, contentIgnored, searchHandlers, usersHandlers, usersIgnored } from '../consumers/index.ts';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type ProjectionBatch, projectionBatch } from '../domain/projection.ts';

type Handler = (batch: ProjectionBatch, event: EventEnvelope) => void;
const feeds: Array<{ stream: ServiceName; handlers: object; ignored: readonly string[] }> = [
  { stream: 'users', handlers: usersHandlers, ignored: usersIgnored },
  { stream: 'content', handlers: contentHandlers, ignored: contentIgnored },
  { stream: 'search', handlers: searchHandlers, ignored: [] },
];
/** Everything the feed builds; a rebuild empties it and reads the streams again. */
const PROJECTION = [
  'questions',
  'question_tags',
  'solutions',
  'validation_requests',
  'routings',
  'forwards',
  'spaces',
  'people',
  'declines',
  'question_views',
  'drafts_shown',
] as const;

export interface AnalyticsFeed {
  /** Resolves once every event in the streams at call time has been applied. */
  caughtUp(): Promise<void>;
  /** Forgets every figure and reads the streams again from their start. */
  rebuild(): Promise<void>;
  status(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * Builds the projection from the streams: an ordered consumer per stream starting after the
 * position stored beside the projection, batches applied in one transaction with their new
 * position (the batch's changes folded into a few statements, domain/projection.ts). The position row is locked for the batch, so instances that read the same stream
 * apply each event once; a batch that starts beyond the stored position (another instance rebuilt)
 * fails, and the follower resumes from the stored position.
 */
export async function startAnalyticsFeed(options: {
  bus: Bus;
  db: Kysely<AnalyticsSchema>;
  batch: number;
  logger: Logger;
}): Promise<AnalyticsFeed> {
  const { bus, db } = options;
  const log = options.logger.child({ component: 'analytics-feed' });
  const applied = new Map<ServiceName, number>();
  let waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const settle = () => {
    const done = waiters.filter((w) => w.done());
    waiters = waiters.filter((w) => !done.includes(w));
    for (const w of done) w.resolve();
  };
  const position = async (stream: ServiceName) =>
    Number((await db.selectFrom('feed_positions').select('seq').where('stream', '=', stream).executeTakeFirst())?.seq ?? 0);

  async function apply(stream: ServiceName, handlers: Record<string, Handler>, messages: JsMsg[]) {
    const bodies = await Promise.all(messages.map((msg) => eventBody(bus, stream, msg)));
    const last = messages[messages.length - 1]!.info.streamSequence;
    await transaction(db, async (tx) => {
      const row = await tx.selectFrom('feed_positions').select('seq').where('stream', '=', stream).forUpdate().executeTakeFirstOrThrow();
      const stored = Number(row.seq);
      const first = messages[0]!.info.streamSequence;
      if (first > stored + 1) throw new Error(`${stream} read from ${first} but applied to ${stored}`);
      const batch = projectionBatch();
      for (const [i, msg] of messages.entries()) {
        if (msg.info.streamSequence <= stored) continue;
        const handler = handlers[bus.unprefix(msg.subject)];
        if (!handler) continue;
        const envelope = EventEnvelope.safeParse(bodies[i]!.json());
        const payload = envelope.success ? events[envelope.data.subject as EventSubject]?.safeParse(envelope.data.data) : undefined;
        if (!envelope.success || !payload?.success) {
          // A figure must not stop on one event it cannot read: logged, and left out.
          log.error({ seq: msg.info.streamSequence, subject: msg.subject }, 'event does not match the catalogue; skipped');
          continue;
        }
        handler(batch, { ...(envelope.data as EventEnvelope), data: payload.data });
      }
      await batch.write(tx);
      if (last > stored) await tx.updateTable('feed_positions').set({ seq: last }).where('stream', '=', stream).execute();
    });
    applied.set(stream, last);
    settle();
  }

  let followers: StreamFollower[] = [];
  const follow = () =>
    feeds.map(({ stream, handlers }) =>
      followStream({
        bus,
        consumer: async () => {
          // What is stored is applied, by this instance or another (which may have rebuilt and
          // caught up before this one started reading).
          const from = await position(stream);
          applied.set(stream, from);
          settle();
          return bus.js.consumers.get(bus.streamName(stream), { opt_start_seq: from + 1 });
        },
        pull: options.batch,
        batch: options.batch,
        apply: (messages) => apply(stream, handlers as Record<string, Handler>, messages),
        what: 'analytics feed',
        log: log.child({ stream }),
      }),
    );

  for (const { stream, handlers, ignored } of feeds) {
    const unlisted = unlistedSubjects(stream, handlers, ignored);
    if (unlisted.length) throw new Error(`the analytics feed neither handles nor ignores ${unlisted.join(', ')}`);
    await ensureStream(bus, stream);
    await db
      .insertInto('feed_positions')
      .values({ stream, seq: 0 })
      .onConflict((c) => c.column('stream').doNothing())
      .execute();
  }
  followers = follow();

  async function rebuildOnce() {
    await Promise.all(followers.map((f) => f.stop()));
    try {
      await transaction(db, async (tx) => {
        // The positions first, as a batch locks them before it writes (apply): another instance's
        // batch then waits for the rebuild, or the rebuild for it, instead of each for the other.
        await tx.selectFrom('feed_positions').select('stream').forUpdate().execute();
        await sql`truncate ${sql.join(PROJECTION.map((t) => sql.table(t)))}`.execute(tx);
        await tx.updateTable('feed_positions').set({ seq: 0 }).execute();
      });
      for (const { stream } of feeds) applied.set(stream, 0);
      log.info('analytics rebuilt from the streams');
    } finally {
      followers = follow();
    }
  }
  let rebuilding = Promise.resolve();

  return {
    caughtUp: async () => {
      const targets = await Promise.all(
        feeds.map(async ({ stream }) => [stream, (await bus.jsm.streams.info(bus.streamName(stream))).state.last_seq] as const),
      );
      const done = () => targets.every(([stream, seq]) => (applied.get(stream) ?? 0) >= seq);
      if (done()) return;
      await new Promise<void>((resolve) => waiters.push({ done, resolve }));
    },
    rebuild: () => {
      // One rebuild at a time here: a second one waits, so no follower is started twice.
      rebuilding = rebuilding.then(rebuildOnce, rebuildOnce);
      return rebuilding;
    },
    status: () => Object.fromEntries(applied),
    stop: async () => {
      await Promise.all(followers.map((f) => f.stop()));
      for (const w of waiters) w.resolve();
      waiters = [];
    },
  };
}
