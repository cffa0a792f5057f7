import { type Kysely, sql } from 'kysely';

/**
 * What the question embeddings are made from and the embeddings themselves (semantic/): the text
 * of each question as its latest event says, and one vector a question and model, numbered in the
 * order they were written so that every instance loads what is new.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('question_texts')
    .addColumn('question_id', 'integer', (c) => c.primaryKey())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('source_hash', 'text', (c) => c.notNull())
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('question_texts_updated').on('question_texts').column('updated').execute();
  await sql`create sequence question_embeddings_seq`.execute(db);
  await db.schema
    .createTable('question_embeddings')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('source_hash', 'text', (c) => c.notNull())
    .addColumn('scale', 'real', (c) => c.notNull())
    .addColumn('vector', 'bytea', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull().defaultTo(sql`nextval('question_embeddings_seq')`))
    .addPrimaryKeyConstraint('question_embeddings_pkey', ['model', 'question_id'])
    .execute();
  await db.schema.createIndex('question_embeddings_seq_idx').on('question_embeddings').columns(['model', 'seq']).execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('question_embeddings').execute();
  await sql`drop sequence question_embeddings_seq`.execute(db);
  await db.schema.dropTable('question_texts').execute();
}
