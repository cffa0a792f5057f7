import { afterCommit, type Db } from '@kn/db';
import { lockedJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { ContentSchema } from '../db/schema.ts';
import { sendViewCounts } from '../domain/view-events.ts';

/** The views job: every instance runs the timer, one instance at a time sends the counted views. */
export function startViewEvents(deps: { db: Db<ContentSchema>; logger: Logger }, options: { intervalMs: number }) {
  const { logger } = deps;
  return lockedJob<ContentSchema, number, Date>({
    name: 'views round',
    db: deps.db,
    lock: 'content.view_events',
    everyMs: options.intervalMs,
    logger,
    busy: 0,
    round: async (tx, now = new Date()) => {
      const sent = await sendViewCounts(tx, now, 50_000);
      if (sent) afterCommit(tx, () => logger.debug({ questions: sent }, 'sent counted views'));
      return sent;
    },
  });
}
