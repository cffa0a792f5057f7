import { type Kysely, sql } from 'kysely';

/**
 * Reuse (views, similar questions shown to drafts), declines, the roles of people (who is a
 * manager, for the digest), and the weekly digest: who asked for it and which weeks were sent.
 * The digest's tables are no projection: a rebuild keeps them.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('declines')
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('declined_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('declines_pk', ['question_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('question_views')
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addColumn('solved_views', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('question_views_pk', ['day', 'question_id'])
    .execute();
  await db.schema
    .createTable('drafts_shown')
    .addColumn('question_id', 'integer', (c) => c.primaryKey())
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('knowledge_space_id', 'integer')
    .addColumn('shown_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable('people')
    .addColumn('roles', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .execute();
  await db.schema
    .createTable('digest_settings')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('weekly', 'boolean', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('digests_sent')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('week', 'date', (c) => c.notNull())
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('digests_sent_pk', ['user_id', 'week'])
    .execute();
}

export async function down(db: Kysely<any>) {
  for (const table of ['digests_sent', 'digest_settings', 'drafts_shown', 'question_views', 'declines'])
    await db.schema.dropTable(table).execute();
  await db.schema.alterTable('people').dropColumn('roles').execute();
}
