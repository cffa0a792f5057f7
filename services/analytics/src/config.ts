import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const AnalyticsConfig = BaseConfig.extend({
  ANALYTICS_FEED_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(1000)
    .describe('Events applied to the figures in one transaction while catching up with the streams.'),
  ANALYTICS_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(15_000)
    .describe(
      'How long (ms) an answer of the figures is reused for the same question by the same caller (0: never); the figures are at most this old.',
    ),
  ANALYTICS_DIGEST_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(3_600_000)
    .describe(
      'How often the weekly digest job looks for digests due (ms): each person who asked gets the last whole week once; one instance works per round.',
    ),
});
export type AnalyticsConfig = z.infer<typeof AnalyticsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(AnalyticsConfig, env);
