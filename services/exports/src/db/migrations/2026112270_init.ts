import { createBusTables } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await db.schema
    .createTable('export_jobs')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('topic_content', 'content')`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('processing').check(sql`status in ('processing', 'success', 'error')`))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('parameters', 'jsonb', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('start_date', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('end_date', 'timestamptz')
    .addColumn('file_size', 'bigint')
    .addColumn('count', 'integer')
    .addColumn('message', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('object_name', 'text')
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('export_jobs_kind').on('export_jobs').columns(['kind', 'id']).execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('export_jobs').execute();
  await db.schema.dropTable('processed_events').execute();
  await db.schema.dropTable('outbox').execute();
}
