import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

const int = (fallback: number, description: string, min = 1) => z.coerce.number().int().min(min).default(fallback).describe(description);

export const ExportsConfig = BaseConfig.extend({
  EXPORT_PAGE_SIZE: int(500, 'Questions asked of the content service per request (also bounded by the message size).'),
  EXPORT_PAGE_DELAY_MS: int(0, 'Pause between two pages (ms): spreads the load of a large export on a busy network (0: none).', 0),
  EXPORT_CONCURRENCY: int(1, 'Exports one instance runs at the same time; other jobs wait in the stream for any instance.'),
  EXPORT_ACK_WAIT_MS: int(
    30_000,
    'A job whose worker went silent for this long (ms) is handed to another instance (the worker reports progress at a third of it).',
    1000,
  ),
  EXPORT_MAX_ATTEMPTS: int(5, 'Runs of a job that fail for a passing reason (a service unreachable) before it is marked error.'),
  EXPORT_RPC_TIMEOUT_MS: int(30_000, 'How long one request to the content or users service may take (ms).'),
  EXPORT_ZIP_LEVEL: z.coerce
    .number()
    .int()
    .min(1)
    .max(9)
    .default(6)
    .describe("Deflate level of the content export's zip (1 fastest … 9 smallest)."),
});
export type ExportsConfig = z.infer<typeof ExportsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(ExportsConfig, env);
