import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import { type Db, json } from '@kn/db';
import type { Transaction } from 'kysely';
import type { ContentSchema } from '../db/schema.ts';
import { applyGroupSpaces, assignNewUser } from '../domain/knowledge-spaces.ts';

/**
 * Keeps the content service's projection of users and network settings: who exists (mentions are
 * checked against it), each user's content languages (the default language filter of
 * GET /questions) and the network settings (solution_validation_enabled, default_language); and
 * the knowledge-space memberships the users' identity-provider groups give them.
 */
export const usersHandlers: EventHandlers<'users'> = {
  'users.user.created.v1': async (tx, { data }) => {
    await upsertUser(tx, data.user);
    await assignNewUser(tx as Transaction<ContentSchema>, data.user.id);
    await groupSpaces(tx, data.user);
  },
  'users.user.updated.v1': async (tx, { data }) => {
    await upsertUser(tx, data.user);
    await groupSpaces(tx, data.user);
  },
  'users.user.deleted.v1': async (tx, { data }) => {
    await (tx as Transaction<ContentSchema>)
      .updateTable('user_projection')
      .set({ is_deleted: true })
      .where('id', '=', data.user_id)
      .execute();
  },
  'users.settings.updated.v1': async (tx, { data }) => {
    const t = tx as Transaction<ContentSchema>;
    const languages = data.language.content_languages;
    const hasAll = data.language.has_all_languages;
    const res = await t
      .updateTable('user_projection')
      .set({ content_languages: languages, has_all_languages: hasAll })
      .where('id', '=', data.user_id)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) {
      // Settings can only change for an existing user, whose created event came first in the stream.
      await t
        .insertInto('user_projection')
        .values({ id: data.user_id, firstname: '', lastname: '', content_languages: languages, has_all_languages: hasAll })
        .onConflict((c) => c.column('id').doUpdateSet({ content_languages: languages, has_all_languages: hasAll }))
        .execute();
    }
  },
  'users.network-settings.updated.v1': async (tx, { data }) => {
    const { webhook_secret_set: _secret, ...settings } = data.settings;
    await (tx as Transaction<ContentSchema>)
      .insertInto('network_projection')
      .values({ id: 1, settings: json(settings) })
      .onConflict((c) => c.column('id').doUpdateSet({ settings: json(settings) }))
      .execute();
  },
};

async function upsertUser(
  tx: Transaction<any>,
  user: { id: number; firstname: string; lastname: string; is_deleted: boolean; is_active: boolean },
) {
  // A deactivated user (SCIM) is gone for content as a deleted one is, until reactivated.
  const values = { firstname: user.firstname, lastname: user.lastname, is_deleted: user.is_deleted || user.is_active === false };
  await (tx as Transaction<ContentSchema>)
    .insertInto('user_projection')
    .values({ id: user.id, ...values, content_languages: null })
    .onConflict((c) => c.column('id').doUpdateSet(values))
    .execute();
}

/** The spaces the person's identity-provider groups make them a member of; an event from before they were published changes none. */
async function groupSpaces(tx: Transaction<any>, user: { id: number; group_knowledge_spaces?: number[] | undefined }) {
  if (user.group_knowledge_spaces) await applyGroupSpaces(tx as Transaction<ContentSchema>, user.id, user.group_knowledge_spaces);
}

export function startUsersConsumer(options: { bus: Bus; db: Db<ContentSchema> }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'content-users',
    stream: 'users',
    ignore: [],
    handlers: usersHandlers,
  });
}
