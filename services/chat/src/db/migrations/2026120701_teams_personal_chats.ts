import type { Kysely } from 'kysely';

/** Teams: a message for a person without a recorded personal chat names them; the sender creates the chat first. */
export async function up(db: Kysely<any>) {
  await db.schema.alterTable('messages').addColumn('personal_of', 'text').execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('messages').dropColumn('personal_of').execute();
}
