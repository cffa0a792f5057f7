import { type Kysely, sql } from 'kysely';

/**
 * SCIM provisioning (docs/scim.md): a user's `active` flag and the roles their identity-provider
 * groups gave them, the groups with their members, and the provisioning tokens.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .alterTable('users')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('group_roles', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('user_name', 'text')
    .execute();
  // SCIM's userName is unique among live users, and so is what a person signs in with.
  await sql`create unique index users_user_name_live on users (lower(coalesce(user_name, email))) where not is_deleted`.execute(db);
  await db.schema
    .createTable('groups')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index groups_display_name on groups (lower(display_name))`.execute(db);
  await db.schema
    .createTable('group_members')
    .addColumn('group_id', 'uuid', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_members_user').on('group_members').column('user_id').execute();
  await db.schema
    .createTable('scim_tokens')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'integer', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('scim_tokens').execute();
  await db.schema.dropTable('group_members').execute();
  await db.schema.dropTable('groups').execute();
  await db.schema.alterTable('users').dropColumn('group_roles').dropColumn('user_name').dropColumn('is_active').execute();
}
