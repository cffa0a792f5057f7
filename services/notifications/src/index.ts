import { serveOperations } from '@kn/bus';
import { notificationsOperations } from '@kn/contracts';
import { startRuntime } from '@kn/service';
import type { NotificationsConfig } from './config.ts';
import { startContentConsumer } from './consumers/content.ts';
import { startSearchConsumer } from './consumers/search.ts';
import { startUsersConsumer } from './consumers/users.ts';
import { migrations } from './db/migrations/index.ts';
import type { NotificationsSchema } from './db/schema.ts';
import { startDigestJob } from './domain/digest.ts';
import { startEmailWorker } from './domain/email.ts';
import { startWebhookWorker } from './domain/webhooks.ts';
import { createHandlers } from './handlers/index.ts';

export { loadConfig, NotificationsConfig } from './config.ts';

/** Starts the notifications service: projections, the content and search consumers, email and webhook outboxes, the digest job. */
export async function start(config: NotificationsConfig) {
  const runtime = await startRuntime<NotificationsSchema>({ service: 'notifications', config, migrations });
  const { db, bus, logger } = runtime;
  const email = startEmailWorker({ db, config, logger });
  const webhooks = startWebhookWorker({ db, bus, config, logger });
  const digest = startDigestJob({ db, logger, onQueued: () => email.wake() }, { intervalMs: config.DIGEST_INTERVAL_MS });
  const usersConsumer = await startUsersConsumer({ bus, db });
  const hooks = {
    maxEventAgeMs: config.NOTIFY_MAX_EVENT_AGE_MS,
    // The handler returns before its transaction commits: look a moment later (the poll is the fallback).
    created: ({ emails, webhooks: deliveries }: { emails: number; webhooks: number }) => {
      setTimeout(() => {
        if (emails) email.wake();
        if (deliveries) webhooks.wake();
      }, 20);
    },
  };
  const contentConsumer = await startContentConsumer({ bus, db, hooks });
  const searchConsumer = await startSearchConsumer({ bus, db, hooks });
  const rpc = serveOperations({
    bus,
    requestKeys: runtime.requestKeys,
    service: 'notifications',
    operations: notificationsOperations,
    handlers: createHandlers({ db }),
  });
  logger.info('notifications service ready');
  return {
    runtime,
    consumers: { users: usersConsumer, content: contentConsumer, search: searchConsumer },
    workers: { email, webhooks, digest },
    stop: async () => {
      try {
        await rpc.stop();
        await contentConsumer.stop();
        await searchConsumer.stop();
        await usersConsumer.stop();
        await digest.stop();
        await webhooks.stop();
        await email.stop();
      } finally {
        // The relay and connections go even when a part failed to stop.
        await runtime.stop();
      }
    },
  };
}
