import { serveOperations } from '@kn/bus';
import { contentOperations } from '@kn/contracts';
import { startRuntime } from '@kn/service';
import type { ContentConfig } from './config.ts';
import { migrations } from './db/migrations/index.ts';
import type { ContentSchema } from './db/schema.ts';
import { createHandlers } from './handlers/index.ts';

export { ContentConfig, loadConfig } from './config.ts';

/** Starts the content service: questions, solutions, comments, attachments, tags, categories. */
export async function start(config: ContentConfig) {
  const runtime = await startRuntime<ContentSchema>({ service: 'content', config, migrations });
  const { db, bus, logger } = runtime;
  const rpc = serveOperations({
    bus,
    service: 'content',
    operations: contentOperations,
    handlers: createHandlers({ db, bus, config, logger }),
  });
  logger.info('content service ready');
  return {
    runtime,
    stop: async () => {
      await rpc.stop();
      await runtime.stop();
    },
  };
}
