import { serveOperations } from '@kn/bus';
import { contentOperations } from '@kn/contracts';
import { serviceParts, startRuntime } from '@kn/service';
import type { ContentConfig } from './config.ts';
import { startUsersConsumer } from './consumers/users.ts';
import { migrations } from './db/migrations/index.ts';
import type { ContentSchema } from './db/schema.ts';
import { searchClient } from './domain/search.ts';
import { startTextWork } from './domain/text-work.ts';
import { createHandlers } from './handlers/index.ts';
import { startSolutionExpiry } from './jobs/solution-expiry.ts';
import { startViewEvents } from './jobs/view-events.ts';

export { ContentConfig, loadConfig } from './config.ts';

/** Starts the content service: questions, solutions, comments, attachments, tags, categories. */
export async function start(config: ContentConfig) {
  const runtime = await startRuntime<ContentSchema>({ service: 'content', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const text = parts.add(startTextWork(config, logger));
    const deps = { db, bus, config, logger, search: searchClient(bus, logger), text };
    const usersConsumer = parts.add(await startUsersConsumer({ bus, db }));
    const solutionExpiry = parts.add(startSolutionExpiry(deps, { intervalMs: config.SOLUTION_EXPIRY_INTERVAL_MS }));
    const viewEvents = parts.add(startViewEvents(deps, { intervalMs: config.CONTENT_VIEW_EVENTS_MS }));
    parts.add(
      serveOperations({
        bus,
        service: 'content',
        requestKeys: runtime.requestKeys,
        operations: contentOperations,
        handlers: createHandlers(deps),
      }),
    );
    logger.info('content service ready');
    return {
      runtime,
      /** The solution-expiry job (tests run a round with runOnce). */
      solutionExpiry,
      /** The job that sends counted views (tests run a round with runOnce). */
      viewEvents,
      /** Event consumers, so tests can wait until a projection has caught up. */
      consumers: { users: usersConsumer },
      stop: parts.stop,
    };
  });
}
