import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import type { UserSnapshot } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';

type T = Tx<ChatSchema>;

async function upsertUser(tx: T, user: UserSnapshot) {
  // A deactivated user (SCIM) is acted for no more than a deleted one.
  const values = { email: user.email, roles: user.roles, is_deleted: user.is_deleted || user.is_active === false };
  await tx
    .insertInto('user_projection')
    .values({ id: user.id, ...values })
    .onConflict((c) => c.column('id').doUpdateSet(values))
    .execute();
}

/** The users the chat acts as: their roles (the actor of its calls) and e-mail (linking by a confirmed address). */
export const usersHandlers: EventHandlers<'users', 'users.settings.updated.v1' | 'users.network-settings.updated.v1'> = {
  'users.user.created.v1': async (tx, { data }) => upsertUser(tx as T, data.user),
  'users.user.updated.v1': async (tx, { data }) => upsertUser(tx as T, data.user),
  'users.user.deleted.v1': async (tx, { data }) => {
    await (tx as T).updateTable('user_projection').set({ is_deleted: true }).where('id', '=', data.user_id).execute();
  },
};

export function startUsersConsumer(options: { bus: Bus; db: Db<ChatSchema> }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'chat-users',
    stream: 'users',
    ignore: ['users.settings.updated.v1', 'users.network-settings.updated.v1'],
    handlers: usersHandlers,
  });
}
