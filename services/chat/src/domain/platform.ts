import type { Db } from '@kn/db';
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
}
