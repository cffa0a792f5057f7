// Fills a content schema with a large network for read benchmarks: QUESTIONS published questions
// (default 100,000), three solutions and one comment each (the first accepted by the poser in
// three questions of five, a day later), 200 tags (two per question), one category in five. Rows are generated inside Postgres (generate_series), not through the API:
// the benchmarks that use this measure reads. Titles and sentences come from the beer dump so
// text and tags look like a real network's.

import path from 'node:path';
import { events } from '@kn/contracts';
import { dumpFiles, parseRow, readRows } from '@kn/stackexchange';
import { dataset } from '@kn/testing';
import pg from 'pg';

export async function seedContent(databaseUrl: string, options: { questions: number; solutionsPerQuestion?: number; users?: number }) {
  const beer = dataset('stackexchange-beer');
  const titles: string[] = [];
  const sentences: string[] = [];
  for await (const raw of readRows(path.join(beer, dumpFiles.posts.file), dumpFiles.posts.root)) {
    const parsed = parseRow('posts', raw);
    if (!parsed.ok) continue;
    if (parsed.row.Title) titles.push(parsed.row.Title);
    const text = parsed.row.Body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    for (const s of text.split(/(?<=[.?!])\s+/)) if (s.length > 30 && s.length < 300) sentences.push(s);
    if (sentences.length > 5000 && titles.length > 1000) break;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const per = options.solutionsPerQuestion ?? 3;
  // Authors are users 2 … users + 1 (the administrator is 1).
  const users = options.users ?? 5000;
  try {
    await client.query('set search_path to content');
    await client.query('begin');
    await client.query('create temporary table bench_titles (i int primary key, t text) on commit drop');
    await client.query('create temporary table bench_sentences (i int primary key, s text) on commit drop');
    await client.query('insert into bench_titles select ordinality - 1, t from unnest($1::text[]) with ordinality t', [titles]);
    await client.query('insert into bench_sentences select ordinality - 1, s from unnest($1::text[]) with ordinality s', [sentences]);
    const nt = titles.length;
    const ns = sentences.length;
    const para = (seed: string, n: number) =>
      `(select string_agg(s, ' ') from bench_sentences where i in (${Array.from({ length: n }, (_, k) => `((${seed}) * ${7 + k * 13} + ${k * 101}) % ${ns}`).join(', ')}))`;
    await client.query(
      `insert into categories (name, description, color) select 'Category ' || g, 'Generated', '#33aa77' from generate_series(1, 5) g`,
    );
    await client.query(`insert into tags (label) select 'tag-' || g from generate_series(1, 200) g`);
    await client.query(`
      insert into questions (author_id, is_published, published, language, title, slug, description, description_text,
                             category_id, solution_count, view_count, created, updated, content_updated, last_activity)
      select 2 + g % ${users}, true, ts, 'en', left(t.t || ' (' || g || ')', 100), 'q-' || g, '<p>' || body || '</p>', body,
             case when g % 5 = 0 then 1 + g % 5 end, ${per}, (g::bigint * 7919) % 5000, ts, ts, ts, ts + interval '1 hour'
      from generate_series(1, ${options.questions}) g
      cross join lateral (select now() - (g || ' minutes')::interval as ts, ${para('g', 3)} as body) b
      join bench_titles t on t.i = g % ${nt}`);
    await client.query(`
      insert into question_tags (question_id, tag_id, position)
      select q.id, tg.id, k from questions q cross join generate_series(0, 1) k
      join tags tg on tg.label = 'tag-' || (1 + (q.id * 31 + k * 17) % 200)`);
    await client.query(`
      insert into solutions (question_id, author_id, description, text, language, is_published, published, rating, rating_count,
                             upvote_count, accepted_by_question_poser, created, updated, content_updated)
      select q.id, 2 + (q.id * 13 + k) % ${users}, '<p>' || body || '</p>', body, 'en', true, q.published + (k || ' minutes')::interval,
             1 + (q.id + k) % 5, 1 + k, k, case when k = 1 and q.id % 5 < 3 then q.published + interval '1 day' end,
             q.published, q.published, q.published
      from questions q cross join generate_series(1, ${per}) k
      cross join lateral (select ${para('q.id * 3 + k', 4)} as body) b`);
    await client.query(`
      insert into comments (question_id, solution_id, author_id, description, text, language, created, updated, content_updated)
      select q.id, null, 2 + q.id % ${users}, s.s, s.s, 'en', q.published, q.published, q.published
      from questions q join bench_sentences s on s.i = q.id % ${ns}`);
    await client.query('commit');
    await client.query('analyze');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** `count` users (ids 2 …) beside the administrator, written as the users service would keep them. */
export async function seedUsers(databaseUrl: string, count: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`
      insert into users.users (email, firstname, lastname, language, roles, search_text, search_text_without_email)
      select 'user' || g || '@bench.invalid', 'User', 'Number ' || g, 'en', '{user,api_user}', ' user number ' || g || ' ', ' user number ' || g || ' '
      from generate_series(1, ${count}) g`);
  } finally {
    await client.end();
  }
}

/** One `content.question.imported.v1` event per seeded question (with its solutions and comment), written to the outbox as the importer would. */
export async function writeImportEvents(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('set search_path to content');
    await client.query(`
      insert into outbox (id, subject, payload, actor_id, occurred_at, trace_context)
      select gen_random_uuid(), 'content.question.imported.v1', json_build_object(
        'question', json_build_object('id', q.id, 'author_id', q.author_id, 'is_published', true,
          'published', to_char(q.published at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'is_deleted', false,
          'language', q.language, 'title', q.title, 'slug', q.slug, 'description', q.description, 'description_text', q.description_text,
          'mentions', '[]'::json,
          'tags', (select coalesce(json_agg(json_build_object('id', t.id, 'label', t.label) order by qt.position), '[]'::json)
                     from question_tags qt join tags t on t.id = qt.tag_id where qt.question_id = q.id),
          'category', (select json_build_object('id', c.id, 'name', c.name) from categories c where c.id = q.category_id),
          'knowledge_space', null, 'knowledge_space_id', null, 'followers', '[]'::json, 'solution_count', q.solution_count, 'view_count', q.view_count, 'upvote_count', q.upvote_count,
          'created', to_char(q.created at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updated', to_char(q.updated at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'content_updated', to_char(q.content_updated at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'last_activity', to_char(q.last_activity at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
        'solutions', (select coalesce(json_agg(json_build_object('id', s.id, 'question_id', s.question_id, 'author_id', s.author_id,
            'description', s.description, 'text', s.text, 'language', s.language, 'is_published', true,
            'published', to_char(s.published at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'is_deleted', false,
            'rating', s.rating, 'rating_count', s.rating_count, 'upvote_count', s.upvote_count,
            'accepted_by_question_poser', to_char(s.accepted_by_question_poser at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'validity_period', null, 'expires', null,
            'created', to_char(s.created at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'updated', to_char(s.updated at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'content_updated', to_char(s.content_updated at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))), '[]'::json)
          from solutions s where s.question_id = q.id),
        'comments', (select coalesce(json_agg(json_build_object('id', c.id, 'question_id', c.question_id, 'solution_id', null,
            'solution_author_id', null, 'author_id', c.author_id, 'description', c.description, 'text', c.text, 'language', c.language,
            'is_deleted', false,
            'created', to_char(c.created at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'updated', to_char(c.updated at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))), '[]'::json)
          from comments c where c.question_id = q.id),
        'external_id', 'bench-' || q.id), null, now(), '{}'
      from questions q order by q.id`);
    // A payload the catalogue refuses would be skipped by every consumer: the benchmark would wait forever.
    const { rows } = await client.query(`select payload from outbox order by position limit 1`);
    const checked = events['content.question.imported.v1'].safeParse(rows[0]?.payload);
    if (!checked.success) throw new Error(`the benchmark's import events do not match the catalogue: ${checked.error.message}`);
    await client.query(`select pg_notify('kn_outbox', 'content')`);
  } finally {
    await client.end();
  }
}
