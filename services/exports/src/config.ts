import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

const int = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);

export const ExportsConfig = BaseConfig.extend({
  /** Questions asked of the content service per request (also bounded by the message size). */
  EXPORT_PAGE_SIZE: int(500),
  /** Pause between two pages: spreads the load of a large export on a busy network (0: none). */
  EXPORT_PAGE_DELAY_MS: int(0, 0),
  /** Exports one instance runs at the same time; other jobs wait in the stream for any instance. */
  EXPORT_CONCURRENCY: int(1),
  /** A job whose worker went silent for this long is handed to another instance (the worker reports progress at a third of it). */
  EXPORT_ACK_WAIT_MS: int(30_000, 1000),
  /** Runs of a job that fail for a passing reason (a service unreachable) before it is marked error. */
  EXPORT_MAX_ATTEMPTS: int(5),
  /** How long one request to the content or users service may take. */
  EXPORT_RPC_TIMEOUT_MS: int(30_000),
  /** Deflate level of the content export's zip (1 fastest … 9 smallest). */
  EXPORT_ZIP_LEVEL: z.coerce.number().int().min(1).max(9).default(6),
});
export type ExportsConfig = z.infer<typeof ExportsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(ExportsConfig, env);
