import { type Kysely, sql } from 'kysely';

/** When a web session was last used: it ends after the network's web_session_idle_minutes without use. */
export async function up(db: Kysely<any>) {
  await db.schema
    .alterTable('tokens')
    .addColumn('last_used', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('tokens').dropColumn('last_used').execute();
}
