import type { Db } from '@kn/db';
import type { ChatSchema, MessageRow } from '../../db/schema.ts';
import type { TeamsConnector } from './connector.ts';

/**
 * Where a Teams message goes: its conversation, or, for a person whose personal chat with the bot
 * was not recorded (linked without ever writing to it), the chat created with Bot Framework's
 * createConversation (bot, the person, their tenant) and then recorded on their link, so that the
 * next message goes straight there. A person unlinked meanwhile gets nothing (given up).
 */
export async function teamsConversationOf(
  deps: { db: Db<ChatSchema>; connector: TeamsConnector; appId: string },
  row: Pick<MessageRow, 'installation_id' | 'recipient' | 'personal_of'>,
  installation: { workspace: string; service_url: string | null },
) {
  if (!row.personal_of) return row.recipient;
  const link = await deps.db
    .selectFrom('links')
    .select(['id', 'conversation_id'])
    .where('installation_id', '=', row.installation_id)
    .where('chat_user_id', '=', row.personal_of)
    .executeTakeFirst();
  if (!link) throw new Error('the Teams user is not linked any more');
  if (link.conversation_id) return link.conversation_id;
  const conversation = await deps.connector.createPersonal(installation.service_url ?? '', {
    botId: `28:${deps.appId}`,
    userId: row.personal_of,
    tenantId: installation.workspace,
  });
  // Kept when the person wrote to the bot meanwhile: that is their personal chat too.
  await deps.db
    .updateTable('links')
    .set({ conversation_id: conversation })
    .where('id', '=', link.id)
    .where('conversation_id', 'is', null)
    .execute();
  return conversation;
}
