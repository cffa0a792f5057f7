import type { Bus } from '@kn/bus';
import { SEARCH_REBUILD_SUBJECT } from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import type { SearchBackend } from '../core/backend.ts';

/**
 * Rebuilds the index when an operator asks (`pnpm search:rebuild`): the request is answered at
 * once, and the rebuild and its catch-up run in the background, logged when they end.
 */
export function listenForRebuilds(deps: { bus: Bus; backend: SearchBackend; logger: Logger }) {
  const { bus, backend, logger } = deps;
  const subscription = bus.nc.subscribe(bus.subject(SEARCH_REBUILD_SUBJECT), {
    callback: (_err, msg) => {
      logger.info('search index rebuild requested');
      const started = Date.now();
      msg.respond(JSON.stringify({ started: true }));
      backend.rebuild().then(
        () => backend.caughtUp().then(() => logger.info({ ms: Date.now() - started }, 'search index rebuilt')),
        (err) => logger.error({ err }, 'search index rebuild failed'),
      );
    },
  });
  return {
    stop: async () => {
      subscription.unsubscribe();
    },
  };
}
