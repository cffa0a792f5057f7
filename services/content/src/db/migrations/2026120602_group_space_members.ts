import type { Kysely } from 'kysely';

/**
 * Why a person is a member of a knowledge space: set by hand (PUT /knowledge-spaces/:id/members, or
 * the automatic assignment of new users) or given by their identity-provider groups (the users
 * service's group_knowledge_spaces). The row stays while either holds, so leaving a group takes
 * away only what the group gave. Existing memberships were all set by hand.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .alterTable('knowledge_space_members')
    .addColumn('by_hand', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('by_groups', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('knowledge_space_members').dropColumn('by_hand').dropColumn('by_groups').execute();
}
