import { type Kysely, sql } from 'kysely';

/** Routing decisions: which experts a question was sent to, once per causing event. */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('routings')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('source_event_id', 'uuid', (c) => c.notNull().unique())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('requested_by', 'integer')
    .addColumn('tags', 'jsonb', (c) => c.notNull())
    .addColumn('experts', 'jsonb', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('routings_question').on('routings').column('question_id').execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('routings').execute();
}
