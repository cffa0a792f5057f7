import { createBusTables } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await db.schema
    .createTable('categories')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('translations', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('knowledge_spaces')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_closed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('automatic_new_user_assignment', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('knowledge_space_members')
    .addColumn('knowledge_space_id', 'integer', (c) => c.notNull().references('knowledge_spaces.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_space_members_pk', ['knowledge_space_id', 'user_id'])
    .execute();
  await db.schema.createIndex('knowledge_space_members_user').on('knowledge_space_members').column('user_id').execute();
  await db.schema
    .createTable('questions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('is_published', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('published', 'timestamptz')
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('description_text', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('mentions', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('category_id', 'integer', (c) => c.references('categories.id').onDelete('set null'))
    .addColumn('knowledge_space_id', 'integer', (c) => c.references('knowledge_spaces.id'))
    .addColumn('solution_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('view_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('upvote_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('flag_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('translations', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('content_updated', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_activity', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // GET /questions: the default page (published, live, last_activity desc) is an index range scan.
  await sql`create index questions_listing on questions (last_activity desc, id desc) where is_published and not is_deleted`.execute(db);
  await sql`create index questions_listing_language on questions (language, last_activity desc, id desc) where is_published and not is_deleted`.execute(
    db,
  );
  await sql`create index questions_published_date on questions (published desc, id desc) where is_published and not is_deleted`.execute(db);
  await db.schema.createIndex('questions_author').on('questions').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('questions_category').on('questions').column('category_id').execute();
  await sql`create index questions_space on questions (knowledge_space_id) where knowledge_space_id is not null`.execute(db);
  await sql`create index questions_flagged on questions (id) where flag_count > 0`.execute(db);
  // The total of the default page (no filter but language and knowledge space) without counting
  // 100,000 index entries per request: a trigger keeps the number of published, live questions
  // per language and knowledge space (0 = none).
  await db.schema
    .createTable('question_counts')
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('knowledge_space_id', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('question_counts_pk', ['language', 'knowledge_space_id'])
    .execute();
  // Statement-level, over the transition tables: one upsert per (language, space) and statement,
  // so a bulk insert (imports, the bench seed) does not update one counter row 100,000 times in
  // one transaction; an update that moves no question in or out (views, counters) writes nothing.
  await sql`create function question_counts_maintain() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'INSERT' then
        insert into question_counts as c (language, knowledge_space_id, n)
          select language, coalesce(knowledge_space_id, 0), count(*) from new_rows where is_published and not is_deleted group by 1, 2
          on conflict (language, knowledge_space_id) do update set n = c.n + excluded.n;
      elsif tg_op = 'DELETE' then
        update question_counts c set n = c.n - d.n
          from (select language, coalesce(knowledge_space_id, 0) as ks, count(*) as n from old_rows
                where is_published and not is_deleted group by 1, 2) d
          where c.language = d.language and c.knowledge_space_id = d.ks;
      else
        insert into question_counts as c (language, knowledge_space_id, n)
          select language, ks, sum(d) from (
            select language, coalesce(knowledge_space_id, 0) as ks, 1 as d from new_rows where is_published and not is_deleted
            union all
            select language, coalesce(knowledge_space_id, 0), -1 from old_rows where is_published and not is_deleted
          ) x group by 1, 2 having sum(d) <> 0
          on conflict (language, knowledge_space_id) do update set n = c.n + excluded.n;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger question_counts_insert after insert on questions
    referencing new table as new_rows for each statement execute function question_counts_maintain()`.execute(db);
  await sql`create trigger question_counts_update after update on questions
    referencing old table as old_rows new table as new_rows for each statement execute function question_counts_maintain()`.execute(db);
  await sql`create trigger question_counts_delete after delete on questions
    referencing old table as old_rows for each statement execute function question_counts_maintain()`.execute(db);

  await db.schema
    .createTable('tags')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('label', 'varchar(191)', (c) => c.notNull())
    .addColumn('excluded_from_suggestions', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Labels are unique regardless of case: `Java` and `java` are one tag.
  await sql`create unique index tags_label_lower on tags (lower(label))`.execute(db);
  await db.schema
    .createTable('question_tags')
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id').onDelete('cascade'))
    .addColumn('tag_id', 'uuid', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('question_tags_pk', ['question_id', 'tag_id'])
    .execute();
  await db.schema.createIndex('question_tags_tag').on('question_tags').columns(['tag_id', 'question_id']).execute();
  await db.schema
    .createTable('tag_links')
    .addColumn('tag_id', 'uuid', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addColumn('linked_tag_id', 'uuid', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('tag_links_pk', ['tag_id', 'linked_tag_id'])
    .execute();
  await db.schema
    .createTable('question_follows')
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('question_follows_pk', ['question_id', 'user_id'])
    .execute();
  await db.schema.createIndex('question_follows_user').on('question_follows').columns(['user_id', 'question_id']).execute();
  await db.schema
    .createTable('question_flags')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull().references('questions.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('question_flags_question').on('question_flags').column('question_id').execute();
  await db.schema
    .createTable('user_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('content_languages', sql`text[]`)
    .addColumn('has_all_languages', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
  await db.schema
    .createTable('network_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>) {
  for (const t of ['insert', 'update', 'delete']) await sql.raw(`drop trigger if exists question_counts_${t} on questions`).execute(db);
  await sql`drop function if exists question_counts_maintain()`.execute(db);
  for (const t of [
    'question_counts',
    'network_projection',
    'user_projection',
    'question_flags',
    'question_follows',
    'tag_links',
    'question_tags',
    'tags',
    'questions',
    'knowledge_space_members',
    'knowledge_spaces',
    'categories',
    'processed_events',
    'outbox',
  ])
    await db.schema.dropTable(t).execute();
}
