import { type Kysely, sql } from 'kysely';

/**
 * The knowledge spaces a user's identity-provider groups make them a member of (idp_group_mappings),
 * kept so that a change is published only when the set changes (the content service keeps the memberships).
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .alterTable('users')
    .addColumn('group_spaces', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('users').dropColumn('group_spaces').execute();
}
