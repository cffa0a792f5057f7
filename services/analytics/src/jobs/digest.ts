import { type Bus, call } from '@kn/bus';
import { notificationsOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import { type Clock, lockedJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { AnalyticsSchema } from '../db/schema.ts';
import { digestOf, dueDigests, lastWeek } from '../domain/digest.ts';

/** Digests one round hands over at most; the rest follow in the next rounds. */
const PER_ROUND = 200;

/**
 * The weekly digest: every instance runs the timer, one at a time does a round (an advisory lock).
 * A round finds who asked for the digest of the last whole week and has not had it, computes each
 * one's figures and hands them to the notifications service's email outbox, then marks the week
 * sent. Sending twice is impossible on both sides: the notifications service keeps one digest per
 * person and week, so a round that failed after handing one over (and marks nothing) changes
 * nothing when it is repeated. A person whose hand-over fails is tried again next round.
 */
export function startDigestJob(deps: { db: Db<AnalyticsSchema>; bus: Bus; clock: Clock; logger: Logger }, options: { intervalMs: number }) {
  const log = deps.logger.child({ component: 'analytics-digest' });
  return lockedJob<AnalyticsSchema, number, Date>({
    name: 'analytics digest round',
    db: deps.db,
    lock: 'analytics.digest',
    everyMs: options.intervalMs,
    logger: log,
    busy: 0,
    round: async (tx, at) => {
      const now = at ?? deps.clock.now();
      const week = lastWeek(now);
      let handed = 0;
      for (const person of await dueDigests(tx, week, PER_ROUND)) {
        const digest = await digestOf(tx, person, week, now);
        try {
          await call(deps.bus, 'queueAnalyticsDigest', notificationsOperations.queueAnalyticsDigest, {
            actor: null,
            params: undefined,
            query: undefined,
            body: { user_id: person.id, digest },
            requestId: `analytics-digest-${person.id}-${digest.week}`,
            url: '',
          });
        } catch (err) {
          log.warn({ err: (err as Error).message, user_id: person.id, week: digest.week }, 'digest not handed over; next round');
          continue;
        }
        await tx.insertInto('digests_sent').values({ user_id: person.id, week, sent_at: now }).execute();
        handed++;
      }
      if (handed) log.info({ week: week.toISOString().slice(0, 10), handed }, 'weekly digests handed to the email outbox');
      return handed;
    },
  });
}
