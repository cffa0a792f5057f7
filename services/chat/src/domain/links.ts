import { createHash, randomBytes } from 'node:crypto';
import { type Actor, conflict, notFound, type Role } from '@kn/contracts';
import { type Db, type Executor, isUniqueViolation, transaction } from '@kn/db';
import type { ChatSchema, LinkRow } from '../db/schema.ts';

export type Platform = 'slack' | 'teams';

/** The workspace of Teams activities that named no tenant (the Bot Framework emulator's): no chat can be created there. */
export const TEAMS_NO_TENANT = 'default';

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

/** The installation of a workspace (Slack team, Teams tenant), created on its first request. */
export async function installationOf(db: Executor<ChatSchema>, platform: Platform, workspace: string, serviceUrl: string | null = null) {
  const row = await db
    .insertInto('installations')
    .values({ platform, workspace, service_url: serviceUrl })
    .onConflict((c) =>
      c
        .columns(['platform', 'workspace'])
        .doUpdateSet((eb) => ({ service_url: eb.fn.coalesce(eb.ref('excluded.service_url'), eb.ref('installations.service_url')) })),
    )
    .returning(['id', 'service_url'])
    .executeTakeFirstOrThrow();
  return row;
}

/** The network user a chat user acts as: null when not linked, or when the user is gone. */
export async function actorOf(
  db: Executor<ChatSchema>,
  installationId: number,
  chatUserId: string,
): Promise<(Actor & { link: LinkRow }) | null> {
  const row = await db
    .selectFrom('links')
    .innerJoin('user_projection as u', 'u.id', 'links.user_id')
    .selectAll('links')
    .select(['u.roles', 'u.is_deleted'])
    .where('links.installation_id', '=', installationId)
    .where('links.chat_user_id', '=', chatUserId)
    .executeTakeFirst();
  if (!row || row.is_deleted) return null;
  const { roles, is_deleted: _deleted, ...link } = row;
  return { id: link.user_id, roles: roles as Role[], token_id: null, link };
}

/**
 * Every chat account of these network users (where their notifications go), each with its
 * person's stored chat choices: one round trip for an event's recipients.
 */
export function linksOfUsers(db: Executor<ChatSchema>, userIds: number[]) {
  if (userIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('links')
    .innerJoin('installations as i', 'i.id', 'links.installation_id')
    .leftJoin('chat_settings as s', 's.user_id', 'links.user_id')
    .select([
      'links.user_id',
      'links.chat_user_id',
      'links.installation_id',
      'links.conversation_id',
      'i.platform',
      'i.workspace',
      'i.service_url',
      's.chat',
    ])
    .where('links.user_id', 'in', userIds)
    .execute();
}

/** Links a chat user to a network user; a chat user already linked to someone else stays as it is. */
export async function link(
  db: Executor<ChatSchema>,
  values: { installationId: number; chatUserId: string; userId: number; conversationId: string | null },
) {
  try {
    const row = await db
      .insertInto('links')
      .values({
        installation_id: values.installationId,
        chat_user_id: values.chatUserId,
        user_id: values.userId,
        conversation_id: values.conversationId,
      })
      .onConflict((c) =>
        c
          .columns(['installation_id', 'chat_user_id'])
          .doUpdateSet({ conversation_id: values.conversationId })
          .where('links.user_id', '=', values.userId),
      )
      .returningAll()
      .executeTakeFirst();
    if (!row) throw conflict('this chat account is linked to another user: unlink it there first');
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('this chat account is linked to another user: unlink it there first');
    throw err;
  }
}

/** A one-time code for an unlinked chat user; the link to the web app carries it. */
export async function createLinkCode(
  db: Executor<ChatSchema>,
  values: {
    installationId: number;
    chatUserId: string;
    chatUserName: string | null;
    workspaceName: string | null;
    conversationId: string | null;
    ttlMs: number;
    now: Date;
  },
) {
  const code = randomBytes(24).toString('base64url');
  await db
    .insertInto('link_codes')
    .values({
      code_hash: hashCode(code),
      installation_id: values.installationId,
      chat_user_id: values.chatUserId,
      chat_user_name: values.chatUserName?.slice(0, 200) || null,
      workspace_name: values.workspaceName?.slice(0, 200) || null,
      conversation_id: values.conversationId,
      expires: new Date(values.now.getTime() + values.ttlMs),
    })
    .execute();
  return code;
}

/**
 * Which chat account a link code would make act as the caller (shown before they confirm): read
 * only, the code stays. 404 for a code unknown, used or expired, as redeeming answers.
 */
export async function previewLinkCode(db: Executor<ChatSchema>, code: string, now: Date) {
  const row = await db
    .selectFrom('link_codes')
    .innerJoin('installations as i', 'i.id', 'link_codes.installation_id')
    .select([
      'i.platform',
      'i.workspace',
      'link_codes.workspace_name',
      'link_codes.chat_user_id',
      'link_codes.chat_user_name',
      'link_codes.expires',
    ])
    .where('link_codes.code_hash', '=', hashCode(code))
    .executeTakeFirst();
  if (!row || row.expires <= now) throw notFound('link code');
  return { ...row, expires: row.expires.toISOString() };
}

/** Forgets the link codes that expired (none can be redeemed any more). */
export async function forgetExpiredLinkCodes(db: Executor<ChatSchema>, now: Date) {
  await db.deleteFrom('link_codes').where('expires', '<=', now).execute();
}

/** Spends a link code for the signed-in caller: the code goes, the link stays. */
export function redeemLinkCode(db: Db<ChatSchema>, code: string, userId: number, now: Date) {
  return transaction(db, async (tx) => {
    const row = await tx.deleteFrom('link_codes').where('code_hash', '=', hashCode(code)).returningAll().executeTakeFirst();
    if (!row || row.expires <= now) throw notFound('link code');
    const linked = await link(tx, {
      installationId: row.installation_id,
      chatUserId: row.chat_user_id,
      userId,
      conversationId: row.conversation_id,
    });
    return presentLink(tx, linked);
  });
}

export async function presentLink(db: Executor<ChatSchema>, row: LinkRow) {
  const installation = await db
    .selectFrom('installations')
    .select(['platform', 'workspace'])
    .where('id', '=', row.installation_id)
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    platform: installation.platform,
    workspace: installation.workspace,
    chat_user_id: row.chat_user_id,
    created: row.created.toISOString(),
  };
}

export async function linksOf(db: Executor<ChatSchema>, userId: number) {
  const rows = await db
    .selectFrom('links')
    .innerJoin('installations as i', 'i.id', 'links.installation_id')
    .select(['links.id', 'i.platform', 'i.workspace', 'links.chat_user_id', 'links.created'])
    .where('links.user_id', '=', userId)
    .orderBy('links.id')
    .execute();
  return rows.map((r) => ({ ...r, created: r.created.toISOString() }));
}

export async function unlink(db: Executor<ChatSchema>, userId: number, id: number) {
  const gone = await db.deleteFrom('links').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (gone.numDeletedRows === 0n) throw notFound('chat link');
}

/** The network user with this e-mail address, for a chat user whose address the platform confirmed. */
export async function userByEmail(db: Executor<ChatSchema>, email: string) {
  const row = await db
    .selectFrom('user_projection')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .where('is_deleted', '=', false)
    .execute();
  // Two accounts with one address: nobody is picked, the person signs in instead.
  return row.length === 1 ? row[0]!.id : null;
}

/**
 * Links a chat user to the one network user with the address their platform vouches for (when
 * the network trusts that platform's addresses); their actor, or null when nobody has it.
 */
export async function linkByEmail(
  db: Executor<ChatSchema>,
  values: { installationId: number; chatUserId: string; conversationId: string | null; email: string | null | undefined },
) {
  const userId = values.email ? await userByEmail(db, values.email) : null;
  if (userId === null) return null;
  await link(db, { installationId: values.installationId, chatUserId: values.chatUserId, userId, conversationId: values.conversationId });
  return actorOf(db, values.installationId, values.chatUserId);
}
