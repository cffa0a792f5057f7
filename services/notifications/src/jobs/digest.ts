import { afterCommit, type Db } from '@kn/db';
import { lockedJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { NotificationsSchema } from '../db/schema.ts';
import { queueDigests } from '../domain/digest.ts';

/**
 * The monthly digest job: every instance runs the timer, one instance at a time does a round. The
 * digests it queued are sent by the email worker, woken (`onQueued`) once they are committed.
 */
export function startDigestJob(deps: { db: Db<NotificationsSchema>; logger: Logger; onQueued(): void }, options: { intervalMs: number }) {
  const { logger } = deps;
  return lockedJob<NotificationsSchema, number, Date>({
    name: 'digest round',
    db: deps.db,
    lock: 'notifications.digest',
    everyMs: options.intervalMs,
    logger,
    busy: 0,
    round: async (tx, now = new Date()) => {
      const { period, queued } = await queueDigests(tx, now);
      if (queued)
        afterCommit(tx, () => {
          logger.info({ period, queued }, 'queued monthly digests');
          deps.onQueued();
        });
      return queued;
    },
  });
}
