import type { Db } from '@kn/db';
import { type Clock, intervalJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { ChatSchema } from '../db/schema.ts';
import { forgetExpiredLinkCodes } from '../domain/links.ts';
import { forgetOldRequests } from '../domain/slack/app.ts';

/** Every minute: the replay guard keeps only the signatures still inside their window; expired link codes go. */
export function startForgetRequestsJob(deps: { db: Db<ChatSchema>; clock: Clock; logger: Logger }, options: { everyMs?: number } = {}) {
  return intervalJob({
    name: 'chat-forget-requests',
    everyMs: options.everyMs ?? 60_000,
    logger: deps.logger,
    round: async () => {
      await forgetExpiredLinkCodes(deps.db, deps.clock.now());
      return forgetOldRequests(deps.db);
    },
  });
}
