import { createBusTables, createRequestKeysTable } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

// The projection of the streams the figures are computed from, and where each stream was read to.
export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await createRequestKeysTable(db);
  await db.schema
    .createTable('feed_positions')
    .addColumn('stream', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('questions')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('asked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('knowledge_space_id', 'integer')
    .addColumn('category_id', 'integer')
    .addColumn('category_name', 'text')
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('first_solution_at', 'timestamptz')
    .addColumn('accepted_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('questions_asked').on('questions').columns(['asked_at']).execute();
  await sql`create index questions_tags on questions using gin (tags)`.execute(db);
  await db.schema
    .createTable('solutions')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('published_at', 'timestamptz')
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('expires', 'timestamptz')
    .addColumn('renewed_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('solutions_question').on('solutions').columns(['question_id']).execute();
  await db.schema.createIndex('solutions_expires').on('solutions').columns(['expires']).execute();
  await db.schema
    .createTable('validation_requests')
    .addColumn('question_id', 'integer', (c) => c.primaryKey())
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
    .addColumn('requested_by', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('routings')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('routed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expert_ids', sql`integer[]`, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('routings_question').on('routings').columns(['question_id']).execute();
  await db.schema
    .createTable('forwards')
    .addColumn('event_id', 'uuid', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('recipient_id', 'integer', (c) => c.notNull())
    .addColumn('forwarded_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('forwards_question').on('forwards').columns(['question_id']).execute();
  await db.schema
    .createTable('spaces')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_closed', 'boolean', (c) => c.notNull())
    .addColumn('member_ids', sql`integer[]`, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('people')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('department', 'text')
    .addColumn('location', 'text')
    .addColumn('space_ids', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>) {
  for (const table of ['people', 'spaces', 'forwards', 'routings', 'validation_requests', 'solutions', 'questions', 'feed_positions'])
    await db.schema.dropTable(table).execute();
  for (const table of ['request_keys', 'processed_events', 'outbox']) await db.schema.dropTable(table).execute();
}
