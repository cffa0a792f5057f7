import { createBusTables } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await db.schema
    .createTable('search_queries')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
