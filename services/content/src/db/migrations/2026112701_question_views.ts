import type { Kysely } from 'kysely';

/**
 * Who viewed which question on which day (UTC): a view counts once per person, question and day
 * (docs/content.md). The key leads with the day so that the rows of past days, which the read path
 * removes a few at a time, are one range of the key. No foreign key: questions are only ever
 * soft-deleted, and a check per counted view would be a lock on the question for nothing.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('question_views')
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('question_views_pk', ['day', 'question_id', 'user_id'])
    .execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('question_views').execute();
}
