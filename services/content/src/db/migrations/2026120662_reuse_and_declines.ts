import type { Kysely } from 'kysely';

/**
 * What the reuse and routing figures need that nothing recorded before: views counted since the
 * last views event (a job sends and empties them), the first similar questions shown to a draft,
 * and who declined which question ("not me"). One row per question or per person and question.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('question_view_tallies')
    .addColumn('question_id', 'integer', (c) => c.primaryKey())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addColumn('solved_views', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('draft_similar_shown')
    .addColumn('question_id', 'integer', (c) => c.primaryKey())
    .addColumn('shown_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('question_declines')
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('declined_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('question_declines_pk', ['question_id', 'user_id'])
    .execute();
}

export async function down(db: Kysely<any>) {
  for (const table of ['question_declines', 'draft_similar_shown', 'question_view_tallies']) await db.schema.dropTable(table).execute();
}
