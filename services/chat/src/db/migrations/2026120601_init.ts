import { createBusTables, createRequestKeysTable } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await createRequestKeysTable(db);
  await db.schema
    .createTable('installations')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('service_url', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('installations_platform_workspace', ['platform', 'workspace'])
    .execute();
  await db.schema
    .createTable('links')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('installation_id', 'integer', (c) => c.notNull().references('installations.id'))
    .addColumn('chat_user_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('conversation_id', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('links_chat_user', ['installation_id', 'chat_user_id'])
    .execute();
  await db.schema.createIndex('links_user').on('links').column('user_id').execute();
  await db.schema
    .createTable('link_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('installation_id', 'integer', (c) => c.notNull().references('installations.id'))
    .addColumn('chat_user_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text')
    .addColumn('expires', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('user_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('roles', sql`text[]`, (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull())
    .execute();
  await sql`create index user_projection_email on user_projection (lower(email))`.execute(db);
  await db.schema
    .createTable('chat_settings')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('chat', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('seen_requests')
    .addColumn('signature', 'text', (c) => c.primaryKey())
    .addColumn('seen', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('routings')
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('routings_pk', ['question_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('asks')
    .addColumn('source', 'text', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('messages')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('installation_id', 'integer', (c) => c.notNull().references('installations.id'))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('edits', 'text')
    .addColumn('question_id', 'integer')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('next_attempt', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('channel', 'text')
    .addColumn('ts', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent', 'timestamptz')
    .execute();
  await sql`create index messages_due on messages (next_attempt) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>) {
  for (const table of [
    'messages',
    'asks',
    'routings',
    'seen_requests',
    'chat_settings',
    'user_projection',
    'link_codes',
    'links',
    'installations',
  ])
    await db.schema.dropTable(table).execute();
}
