import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import type { UserSnapshot } from '@kn/contracts';
import { type Db, json, type Tx } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';

type T = Tx<NotificationsSchema>;

/**
 * The projection of users (names and email for `Notification.user` and for mail), their language
 * and email settings, and the network settings this service obeys. The webhook secret is not in
 * any event: it is asked of the users service (domain/webhooks.ts).
 */
export const usersHandlers: EventHandlers<'users'> = {
  'users.user.created.v1': async (tx, { data }) => upsertUser(tx as T, data.user),
  'users.user.updated.v1': async (tx, { data }) => upsertUser(tx as T, data.user),
  'users.user.deleted.v1': async (tx, { data }) => {
    await (tx as T).updateTable('user_projection').set({ is_deleted: true }).where('id', '=', data.user_id).execute();
  },
  'users.settings.updated.v1': async (tx, { data }) => {
    const values = { interface_language: data.language.interface_language, email_settings: json(data.email) };
    // Settings of a user always follow the user's created event in the same stream.
    await (tx as T).updateTable('user_projection').set(values).where('id', '=', data.user_id).execute();
  },
  'users.network-settings.updated.v1': async (tx, { data }) => {
    const { webhook_secret_set: _secret, ...settings } = data.settings;
    await (tx as T)
      .insertInto('network_projection')
      .values({ id: 1, settings: json(settings) })
      .onConflict((c) => c.column('id').doUpdateSet({ settings: json(settings) }))
      .execute();
  },
};

async function upsertUser(tx: T, user: UserSnapshot) {
  const { roles: _roles, group_knowledge_spaces: _spaces, ...snapshot } = user;
  const values = {
    email: user.email,
    firstname: user.firstname,
    lastname: user.lastname,
    // A deactivated user (SCIM) gets nothing, as a deleted one, until reactivated.
    is_deleted: user.is_deleted || user.is_active === false,
    snapshot: json(snapshot),
  };
  await tx
    .insertInto('user_projection')
    .values({ id: user.id, ...values, interface_language: null, email_settings: null })
    .onConflict((c) => c.column('id').doUpdateSet(values))
    .execute();
}

export function startUsersConsumer(options: { bus: Bus; db: Db<NotificationsSchema> }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'notifications-users',
    stream: 'users',
    ignore: [],
    handlers: usersHandlers,
  });
}
