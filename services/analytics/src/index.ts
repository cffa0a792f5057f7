import { serveOperations } from '@kn/bus';
import { analyticsOperations } from '@kn/contracts';
import { type Clock, serviceParts, startRuntime, systemClock } from '@kn/service';
import type { AnalyticsConfig } from './config.ts';
import { migrations } from './db/migrations/index.ts';
import type { AnalyticsSchema } from './db/schema.ts';
import { createHandlers } from './handlers/index.ts';
import { startDigestJob } from './jobs/digest.ts';
import { startAnalyticsFeed } from './jobs/feed.ts';

export { AnalyticsConfig, loadConfig } from './config.ts';

/** Starts the analytics service: the feed that builds the figures from the streams, the weekly digest, and their API. */
export async function start(config: AnalyticsConfig, options: { clock?: Clock } = {}) {
  const runtime = await startRuntime<AnalyticsSchema>({ service: 'analytics', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const feed = parts.add(await startAnalyticsFeed({ bus, db, batch: config.ANALYTICS_FEED_BATCH, logger }));
    const clock = options.clock ?? systemClock;
    const digest = parts.add(startDigestJob({ db, bus, clock, logger }, { intervalMs: config.ANALYTICS_DIGEST_INTERVAL_MS }));
    parts.add(
      serveOperations({
        bus,
        service: 'analytics',
        requestKeys: runtime.requestKeys,
        operations: analyticsOperations,
        handlers: createHandlers({ db, bus, clock, feed, cacheMs: config.ANALYTICS_CACHE_MS }),
      }),
    );
    logger.info('analytics service ready');
    return { runtime, feed, digest, stop: parts.stop };
  });
}
