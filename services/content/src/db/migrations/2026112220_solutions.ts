import { type Kysely, sql } from 'kysely';

/** Solutions and what hangs off them; runs after the questions migration (references questions.id). */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('solutions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id'))
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('is_published', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('published', 'timestamptz')
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('deleted', 'timestamptz')
    .addColumn('rating', 'double precision')
    .addColumn('rating_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('upvote_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('accepted_by_question_poser', 'timestamptz')
    .addColumn('validity_period', 'text')
    .addColumn('expires', 'timestamptz')
    // Set by the expiry job when it announced the expiry; cleared by a new validation or an update.
    .addColumn('expired', 'timestamptz')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('content_updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index solutions_question on solutions (question_id, rating desc nulls last, id)`.execute(db);
  await sql`create index solutions_author on solutions (author_id)`.execute(db);
  // One open draft per user and question: a second create updates it.
  await sql`create unique index solutions_one_draft on solutions (question_id, author_id) where not is_published and not is_deleted`.execute(
    db,
  );
  await sql`create index solutions_expiring on solutions (expires) where expires is not null and expired is null`.execute(db);

  await db.schema
    .createTable('solution_ratings')
    .addColumn('solution_id', 'integer', (c) => c.notNull().references('solutions.id'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('rating', 'smallint', (c) => c.notNull().check(sql`rating between 1 and 5`))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('solution_ratings_pk', ['solution_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('solution_upvotes')
    .addColumn('solution_id', 'integer', (c) => c.notNull().references('solutions.id'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('solution_upvotes_pk', ['solution_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('comments')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id'))
    .addColumn('solution_id', 'integer', (c) => c.references('solutions.id'))
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('upvote_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('converted_solution_id', 'integer', (c) => c.references('solutions.id'))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('content_updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index comments_question on comments (question_id, id)`.execute(db);

  await db.schema
    .createTable('attachments')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id'))
    .addColumn('solution_id', 'integer', (c) => c.references('solutions.id'))
    .addColumn('uploader_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('object_name', 'text', (c) => c.notNull().unique())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index attachments_question on attachments (question_id, id)`.execute(db);
  await sql`create index attachments_solution on attachments (solution_id, id) where solution_id is not null`.execute(db);

  await db.schema
    .createTable('question_forwards')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id'))
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('recipient_id', 'integer', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index question_forwards_question on question_forwards (question_id, recipient_id)`.execute(db);

  await db.schema
    .createTable('shares')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id'))
    .addColumn('solution_id', 'integer', (c) => c.references('solutions.id'))
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('recipients', sql`integer[]`, (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('validation_requests')
    .addColumn('question_id', 'integer', (c) => c.primaryKey().references('questions.id'))
    .addColumn('requested_by', 'integer', (c) => c.notNull())
    .addColumn('last_requested', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>) {
  for (const t of [
    'validation_requests',
    'shares',
    'question_forwards',
    'attachments',
    'comments',
    'solution_upvotes',
    'solution_ratings',
    'solutions',
  ])
    await db.schema.dropTable(t).execute();
}
