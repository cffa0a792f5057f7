import type { Bus } from '@kn/bus';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { ContentConfig } from '../config.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SearchClient } from '../domain/search.ts';
import type { TextWork } from '../domain/text-work.ts';

/** What every handler and domain module of the content service may use. */
export interface ContentDeps {
  db: Db<ContentSchema>;
  bus: Bus;
  config: ContentConfig;
  logger: Logger;
  search: SearchClient;
  /** Sanitizing and text extraction within limits (worker threads). */
  text: TextWork;
}
