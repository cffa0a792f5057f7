import { afterCommit, type Db } from '@kn/db';
import { lockedJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { ContentSchema } from '../db/schema.ts';
import { announceExpiredSolutions } from '../domain/solution-expiry.ts';

/** The solution-expiry job: every instance runs it, one instance at a time does a round. */
export function startSolutionExpiry(deps: { db: Db<ContentSchema>; logger: Logger }, options: { intervalMs: number; batchSize?: number }) {
  const { logger } = deps;
  return lockedJob({
    name: 'solution expiry round',
    db: deps.db,
    lock: 'content.solution_expiry',
    everyMs: options.intervalMs,
    logger,
    busy: 0,
    round: async (tx) => {
      const expired = await announceExpiredSolutions(tx, options.batchSize ?? 200);
      if (expired) afterCommit(tx, () => logger.info({ expired }, 'announced expired solutions'));
      return expired;
    },
  });
}
