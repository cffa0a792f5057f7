import { serveOperations } from '@kn/bus';
import { usersOperations } from '@kn/contracts';
import { type Clock, serviceParts, startRuntime, systemClock } from '@kn/service';
import type { UsersConfig } from './config.ts';
import { migrations } from './db/migrations/index.ts';
import type { UsersSchema } from './db/schema.ts';
import { authDomain } from './domain/auth.ts';
import { networkDefaults, networkSettingsStore } from './domain/settings.ts';
import { usersDomain } from './domain/users.ts';
import { createHandlers } from './handlers/index.ts';

export { loadConfig, UsersConfig } from './config.ts';

/** Starts the users service: schema, bus, the administrator on first start, and its operations. */
export async function start(config: UsersConfig, options: { clock?: Clock } = {}) {
  const runtime = await startRuntime<UsersSchema>({ service: 'users', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const settings = networkSettingsStore(db, networkDefaults(config));
    const users = usersDomain({ db, config, settings });
    const admin = await users.ensureAdmin();
    if (admin.created) logger.info({ email: admin.email }, 'created the administrator (password from ADMIN_PASSWORD)');
    parts.add(
      serveOperations({
        bus,
        service: 'users',
        requestKeys: runtime.requestKeys,
        operations: usersOperations,
        handlers: createHandlers({
          db,
          bus,
          users,
          auth: authDomain({ db, config, clock: options.clock ?? systemClock, settings }),
          settings,
          webhookAllowInternal: config.WEBHOOK_ALLOW_INTERNAL === 'true',
        }),
      }),
    );
    logger.info('users service ready');
    return { runtime, stop: parts.stop };
  });
}
