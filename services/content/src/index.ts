import { serveOperations } from '@kn/bus';
import { contentOperations } from '@kn/contracts';
import { startRuntime } from '@kn/service';
import type { ContentConfig } from './config.ts';
import { startUsersConsumer } from './consumers/users.ts';
import { migrations } from './db/migrations/index.ts';
import type { ContentSchema } from './db/schema.ts';
import { searchClient } from './domain/search.ts';
import { startSolutionExpiry } from './domain/validation-job.ts';
import { createHandlers } from './handlers/index.ts';

export { ContentConfig, loadConfig } from './config.ts';

/** Starts the content service: questions, solutions, comments, attachments, tags, categories. */
export async function start(config: ContentConfig) {
  const runtime = await startRuntime<ContentSchema>({ service: 'content', config, migrations });
  const { db, bus, logger } = runtime;
  const deps = { db, bus, config, logger, search: searchClient(bus, logger) };
  const rpc = serveOperations({
    bus,
    service: 'content',
    requestKeys: runtime.requestKeys,
    operations: contentOperations,
    handlers: createHandlers(deps),
  });
  const usersConsumer = await startUsersConsumer({ bus, db });
  const solutionExpiry = startSolutionExpiry(deps, { intervalMs: config.SOLUTION_EXPIRY_INTERVAL_MS });
  logger.info('content service ready');
  return {
    runtime,
    /** The solution-expiry job (tests run a round with runOnce). */
    solutionExpiry,
    /** Event consumers, so tests can wait until a projection has caught up. */
    consumers: { users: usersConsumer },
    stop: async () => {
      await rpc.stop();
      await solutionExpiry.stop();
      await usersConsumer.stop();
      await runtime.stop();
    },
  };
}
