import type { Kysely } from 'kysely';

/** What the web app shows before a code is redeemed: the chat account's and the workspace's names, as the platform gave them. */
export async function up(db: Kysely<any>) {
  await db.schema.alterTable('link_codes').addColumn('chat_user_name', 'text').addColumn('workspace_name', 'text').execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('link_codes').dropColumn('chat_user_name').dropColumn('workspace_name').execute();
}
