import { type Kysely, sql } from 'kysely';

/** Users imported from elsewhere keep the id they had there, so a second import finds them. */
export async function up(db: Kysely<any>) {
  await db.schema.alterTable('users').addColumn('external_id', 'text').execute();
  await sql`create unique index users_external_id on users (external_id) where external_id is not null`.execute(db);
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('users').dropColumn('external_id').execute();
}
