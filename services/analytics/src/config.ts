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
});
export type AnalyticsConfig = z.infer<typeof AnalyticsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(AnalyticsConfig, env);
