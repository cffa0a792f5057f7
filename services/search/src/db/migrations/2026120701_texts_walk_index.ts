import type { Kysely } from 'kysely';

/**
 * The embedding job walks the texts in the order of (updated, question_id), a page at a time
 * (semantic/embeddings.ts advance): an index on both columns makes a page a range of it. An
 * import writes thousands of texts with one `updated`, which an index on `updated` alone cannot
 * order.
 */
export async function up(db: Kysely<any>) {
  await db.schema.createIndex('question_texts_walk').on('question_texts').columns(['updated', 'question_id']).execute();
  await db.schema.dropIndex('question_texts_updated').execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.createIndex('question_texts_updated').on('question_texts').column('updated').execute();
  await db.schema.dropIndex('question_texts_walk').execute();
}
