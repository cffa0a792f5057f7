import { serveOperations } from '@kn/bus';
import { notificationsOperations } from '@kn/contracts';
import { serviceParts, startRuntime } from '@kn/service';
import type { NotificationsConfig } from './config.ts';
import { startContentConsumer } from './consumers/content.ts';
import { startSearchConsumer } from './consumers/search.ts';
import { startUsersConsumer } from './consumers/users.ts';
import { migrations } from './db/migrations/index.ts';
import type { NotificationsSchema } from './db/schema.ts';
import { createHandlers } from './handlers/index.ts';
import { startDigestJob } from './jobs/digest.ts';
import { startEmailWorker } from './jobs/email.ts';
import { startWebhookWorker } from './jobs/webhooks.ts';

export { loadConfig, NotificationsConfig } from './config.ts';

/** Starts the notifications service: projections, the content and search consumers, email and webhook outboxes, the digest job. */
export async function start(config: NotificationsConfig) {
  const runtime = await startRuntime<NotificationsSchema>({ service: 'notifications', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const email = parts.add(startEmailWorker({ db, config, logger }));
    const webhooks = parts.add(startWebhookWorker({ db, bus, config, logger }));
    const digest = parts.add(startDigestJob({ db, logger, onQueued: () => email.wake() }, { intervalMs: config.DIGEST_INTERVAL_MS }));
    const usersConsumer = parts.add(await startUsersConsumer({ bus, db }));
    const hooks = {
      maxEventAgeMs: config.NOTIFY_MAX_EVENT_AGE_MS,
      created: ({ emails, webhooks: deliveries }: { emails: number; webhooks: number }) => {
        if (emails) email.wake();
        if (deliveries) webhooks.wake();
      },
    };
    const contentConsumer = parts.add(await startContentConsumer({ bus, db, hooks }));
    const searchConsumer = parts.add(await startSearchConsumer({ bus, db, hooks }));
    parts.add(
      serveOperations({
        bus,
        requestKeys: runtime.requestKeys,
        service: 'notifications',
        operations: notificationsOperations,
        handlers: createHandlers({ db, onEmailQueued: () => email.wake() }),
      }),
    );
    logger.info('notifications service ready');
    return {
      runtime,
      consumers: { users: usersConsumer, content: contentConsumer, search: searchConsumer },
      workers: { email, webhooks, digest },
      stop: parts.stop,
    };
  });
}
