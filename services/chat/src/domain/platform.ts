import { type Db, withoutDeadline } from '@kn/db';
import type { Clock } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { ChatConfig } from '../config.ts';
import type { ChatSchema } from '../db/schema.ts';
import type { ChatFlows } from './flows.ts';
import type { Outbox } from './outbox.ts';

/** What each platform's app (Slack, Teams) works with. */
export interface PlatformDeps {
  db: Db<ChatSchema>;
  config: ChatConfig;
  clock: Clock;
  logger: Logger;
  flows: ChatFlows;
  outbox: Outbox;
  background: AfterAnswer;
}

/**
 * What a platform request goes on doing once it is answered (Slack wants its answer within 3 s,
 * the Bot Framework within 15): run outside the request's deadline, so a slow moment of the
 * network does not cut it off halfway; `settled()` waits for all of it, and stopping does too.
 */
export function afterAnswer(logger: Logger) {
  const running = new Set<Promise<unknown>>();
  const settled = async () => {
    while (running.size) await Promise.allSettled([...running]);
  };
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const promise = withoutDeadline(work);
      running.add(promise);
      promise.catch((err) => logger.error({ err }, 'a chat request failed after its answer')).finally(() => running.delete(promise));
      return promise;
    },
    settled,
    stop: settled,
  };
}
export type AfterAnswer = ReturnType<typeof afterAnswer>;
