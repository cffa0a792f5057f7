import { createBusTables } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  await db.schema
    .createTable('users')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('gender', 'text')
    .addColumn('location', 'text')
    .addColumn('about', 'text')
    .addColumn('company', 'text')
    .addColumn('department', 'text')
    .addColumn('position', 'text')
    .addColumn('country', 'text')
    .addColumn('customfields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('roles', sql`text[]`, (c) => c.notNull())
    .addColumn('auth_type', 'text', (c) => c.notNull().defaultTo('password'))
    .addColumn('password_hash', 'text')
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_hidden', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_system', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('first_seen', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen', 'timestamptz')
    .addColumn('event_tracking_id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('language_settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('email_settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // One live account per address; a deleted user's address can be used again.
  await sql`create unique index users_email_live on users (lower(email)) where not is_deleted`.execute(db);
  await sql`create index users_search_text on users using gin (search_text public.gin_trgm_ops)`.execute(db);
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('issued_by', 'integer')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked', 'timestamptz')
    .execute();
  await db.schema.createIndex('tokens_user').on('tokens').column('user_id').execute();
  await db.schema
    .createTable('network_settings')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('webhook_secret', 'text')
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into network_settings (id) values (1)`.execute(db);
}

export async function down(db: Kysely<any>) {
  for (const t of ['network_settings', 'tokens', 'users', 'processed_events', 'outbox']) await db.schema.dropTable(t).execute();
}
