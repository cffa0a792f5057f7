import { type Kysely, sql } from 'kysely';

/**
 * Imports (docs/import.md): the external id of imported questions, solutions and comments makes a
 * second import create nothing; links between questions (duplicates, related) are kept for lookups.
 * The ids are 10-digit like the earlier migrations so that key order is apply order.
 */
export async function up(db: Kysely<any>) {
  for (const table of ['questions', 'solutions', 'comments']) {
    await db.schema.alterTable(table).addColumn('external_id', 'text').execute();
    await sql`create unique index ${sql.raw(`${table}_external_id`)} on ${sql.table(table)} (external_id)`.execute(db);
  }
  await db.schema
    .createTable('question_links')
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id').onDelete('cascade'))
    .addColumn('linked_question_id', 'integer', (c) => c.notNull().references('questions.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('duplicate', 'related')`))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('question_links_pk', ['question_id', 'linked_question_id', 'kind'])
    .execute();
  await db.schema.createIndex('question_links_linked').on('question_links').columns(['linked_question_id', 'kind']).execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('question_links').execute();
  for (const table of ['comments', 'solutions', 'questions']) await db.schema.alterTable(table).dropColumn('external_id').execute();
}
