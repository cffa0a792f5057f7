import type { Kysely } from 'kysely';

// The sender's own words on a forward or share, shown with the notification (null elsewhere).
export async function up(db: Kysely<unknown>) {
  await db.schema.alterTable('notifications').addColumn('message', 'text').execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.alterTable('notifications').dropColumn('message').execute();
}
