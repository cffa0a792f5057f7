import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const ContentConfig = BaseConfig.extend({
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024)
    .describe('Largest attachment accepted (bytes); larger uploads get 413 FileTooLarge.'),
  SOLUTION_EXPIRY_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe('How often the solution-expiry job looks for expired solutions (ms); one instance works per round.'),
});
export type ContentConfig = z.infer<typeof ContentConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(ContentConfig, env);
