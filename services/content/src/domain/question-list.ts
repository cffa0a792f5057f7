import { type Actor, forbidden, type Question, type SearchField, SearchFieldNames, validationError } from '@kn/contracts';
import { type Db, sql } from '@kn/db';
import type { RawBuilder } from 'kysely';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { hiddenSpaces, isContentAdmin } from './access.ts';
import { presentQuestions, type QuestionRowWithRelations, questionsWithRelations } from './question-presenters.ts';
import type { SearchClient } from './search.ts';

export interface ListQuestionsQuery {
  query?: string;
  query_default_operator?: 'AND' | 'OR';
  query_fields?: string;
  log_query_type?: 'manual' | 'autocomplete' | 'url' | 'tag';
  limit: number;
  offset: number;
  filter?: string[];
  tags?: string[];
  tag_filter_default_operator: 'AND' | 'OR';
  sort?: string[];
  include_deleted: boolean;
  category?: string;
  categories?: number[];
  include_uncategorized: boolean;
  language_id?: string[];
  knowledge_space?: number;
  translations?: string[];
  solution_author?: number;
}

/**
 * Scores for sorting, from views, solutions, upvotes and recency (docs/content.md):
 * interest weighs a solution like 5 views and an upvote like 3; activity_and_interest divides it
 * by the days since the last activity (+1); trending divides it by (hours since the last activity
 * + 2) to the power 1.5, so a burst of recent interest beats old popularity.
 */
// float8 throughout: numeric power() over 100,000 rows costs a second.
const interest = sql`(q.view_count + 5 * q.solution_count + 3 * q.upvote_count)::float8`;
const ageSeconds = sql`greatest(extract(epoch from (now() - q.last_activity))::float8, 0)`;
const sortExpressions: Record<string, RawBuilder<unknown>> = {
  last_activity: sql`q.last_activity`,
  solution_count: sql`q.solution_count`,
  date_published: sql`q.published`,
  view_count: sql`q.view_count`,
  views: sql`q.view_count`,
  id: sql`q.id`,
  interest,
  activity_and_interest: sql`(${interest} / (${ageSeconds} / 86400 + 1))`,
  trending: sql`(${interest} / power(${ageSeconds} / 3600 + 2, 1.5::float8))`,
};

function orderBy(sort: string[] | undefined, trending: boolean, relevance?: number[]): RawBuilder<unknown> {
  if (relevance && !trending && !sort?.length) return sql`array_position(${relevance}::int[], q.id)`;
  const criteria = trending ? ['trending.desc'] : sort?.length ? sort : ['last_activity.desc'];
  const parts: RawBuilder<unknown>[] = [];
  const used = new Set<string>();
  for (const c of criteria) {
    const [name, dir = 'desc'] = c.split('.');
    const key = name === 'views' ? 'view_count' : name;
    if (used.has(key)) continue;
    used.add(key);
    parts.push(
      sql`${sortExpressions[key]} ${sql.raw(dir === 'asc' ? 'asc' : 'desc')}${sql.raw(key === 'date_published' ? ' nulls last' : '')}`,
    );
  }
  // A unique last criterion makes paging stable.
  if (!used.has('id')) parts.push(sql`q.id desc`);
  return sql.join(parts, sql`, `);
}

/**
 * What limits a user's lists, in one round trip: the closed knowledge spaces they are not a member
 * of, and the languages they read when language_id is not given (null: every language). Read
 * before the list's statement, not inside it: there they were conditions Postgres evaluated on
 * every row it passed (a deep page took twice its CPU); here they are constants, or nothing.
 */
async function viewerScope(db: Db<ContentSchema>, actor: Actor): Promise<{ hidden: number[]; languages: string[] | null }> {
  const hidden = isContentAdmin(actor)
    ? sql`'{}'::int[]`
    : sql`coalesce((select array_agg(k.id order by k.id) from knowledge_spaces k where k.is_closed and not exists
        (select 1 from knowledge_space_members m where m.knowledge_space_id = k.id and m.user_id = ${actor.id})), '{}')`;
  const { rows } = await sql<{ hidden: number[]; content_languages: string[] | null; has_all_languages: boolean | null }>`
    select ${hidden} as hidden, u.content_languages, u.has_all_languages
    from (select 1) one left join user_projection u on u.id = ${actor.id}`.execute(db);
  const row = rows[0]!;
  const languages = row.has_all_languages === false && row.content_languages?.length ? row.content_languages : null;
  return { hidden: row.hidden, languages };
}

/** query_fields: the valid names; none valid (or none given) means every field. */
function searchFields(value: string | undefined): SearchField[] {
  const named = (value ?? '')
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter((f): f is SearchField => (SearchFieldNames as readonly string[]).includes(f));
  return named.length ? [...new Set(named)] : [...SearchFieldNames];
}

/** How many of the best matches a search with filters or a sort of this service's own considers. */
const SEARCH_WINDOW = 1000;

async function listQuestions(
  db: Db<ContentSchema>,
  search: SearchClient,
  query: ListQuestionsQuery,
  actor: Actor,
  request: { url: string; requestId: string },
) {
  const url = request.url;
  const admin = isContentAdmin(actor);
  const filters = new Set(query.filter ?? []);
  if (filters.has('flagged') && !admin) throw forbidden('the flagged filter is for content administrators');

  const where: RawBuilder<unknown>[] = [sql`q.is_published`];
  const withDeleted = query.include_deleted && admin;
  if (!withDeleted) where.push(sql`not q.is_deleted`);
  const { hidden, languages: ownLanguages } = await viewerScope(db, actor);
  if (hidden.length) where.push(sql`(q.knowledge_space_id is null or q.knowledge_space_id not in (${sql.join(hidden)}))`);
  if (query.knowledge_space !== undefined) where.push(sql`q.knowledge_space_id = ${query.knowledge_space}`);
  /** Whether the conditions are only those question_counts knows (language, knowledge space). */
  const countable =
    !withDeleted &&
    ![...filters].some((f) => f !== 'trending') &&
    !query.tags?.length &&
    !query.categories?.length &&
    query.category === undefined &&
    !query.include_uncategorized &&
    query.solution_author === undefined;

  const me = actor.id;
  const published = sql`s.is_published and not s.is_deleted`;
  for (const f of filters) {
    if (f === 'solved') where.push(sql`q.solution_count > 0`);
    else if (f === 'unsolved') where.push(sql`q.solution_count = 0`);
    else if (f === 'my-questions') where.push(sql`q.author_id = ${me}`);
    else if (f === 'following') where.push(sql`exists (select 1 from question_follows f where f.question_id = q.id and f.user_id = ${me})`);
    else if (f === 'flagged') where.push(sql`q.flag_count > 0`);
    else if (f === 'my-solutions')
      where.push(sql`exists (select 1 from solutions s where s.question_id = q.id and s.author_id = ${me} and ${published})`);
    else if (f === 'accepted')
      where.push(
        sql`exists (select 1 from solutions s where s.question_id = q.id and ${published} and s.accepted_by_question_poser is not null)`,
      );
    else if (f === 'verified')
      where.push(
        sql`exists (select 1 from solutions s where s.question_id = q.id and ${published} and s.validity_period is not null and (s.expires is null or s.expires > now()))`,
      );
  }

  if (query.solution_author !== undefined)
    where.push(
      sql`exists (select 1 from solutions s where s.question_id = q.id and s.author_id = ${query.solution_author} and ${published})`,
    );

  const labels = [...new Set((query.tags ?? []).map((t) => t.toLowerCase()))];
  if (labels.length) {
    // One subquery for any number of tags (one per tag made planning alone take seconds at 100).
    const tagged = sql`select qt.question_id from question_tags qt join tags t on t.id = qt.tag_id where lower(t.label) in (${sql.join(labels)})`;
    where.push(
      query.tag_filter_default_operator === 'OR'
        ? sql`q.id in (${tagged})`
        : sql`q.id in (${tagged} group by qt.question_id having count(distinct lower(t.label)) = ${labels.length})`,
    );
  }

  let categories = query.categories;
  let uncategorized = query.include_uncategorized;
  if (query.category !== undefined && categories === undefined) {
    const c = query.category.trim().toLowerCase();
    if (c === 'uncategorized' || c === 'none') uncategorized = true;
    else if (/^\d{1,9}$/.test(c) && Number(c) > 0) categories = [Number(c)];
    else if (c !== 'all' && c !== '')
      throw validationError('category must be a category id, all or uncategorized', [
        { path: 'query.category', code: 'invalid_value', message: 'a category id, all or uncategorized' },
      ]);
  }
  if (categories?.length && uncategorized) where.push(sql`(q.category_id in (${sql.join(categories)}) or q.category_id is null)`);
  else if (categories?.length) where.push(sql`q.category_id in (${sql.join(categories)})`);
  else if (uncategorized) where.push(sql`q.category_id is null`);

  const languages = query.language_id?.length ? query.language_id : ownLanguages;
  if (languages) where.push(sql`q.language in (${sql.join(languages)})`);

  // Full-text search ranks in the search service. Without filters of this service's own (solved,
  // following, …) and without a sort, the index applies every filter and answers the page with its
  // highlighting; otherwise it answers its best matches (the relevance window) and the filters,
  // the sort and the paging happen here.
  const searchText = query.query?.trim() ? query.query : undefined;
  const fields = searchFields(query.query_fields);
  const stopLanguages = languages ?? ['en'];
  const paged = filters.size === 0 && !query.sort?.length && query.solution_author === undefined;
  let ranking: Awaited<ReturnType<SearchClient['match']>> | undefined;
  if (searchText !== undefined) {
    ranking = await search.match(
      {
        query: searchText,
        operator: query.query_default_operator ?? 'OR',
        fields,
        stop_languages: stopLanguages,
        filter: {
          languages: languages ?? undefined,
          hidden_spaces: hidden.length ? hidden : undefined,
          tags: labels.length ? labels : undefined,
          tag_operator: query.tag_filter_default_operator,
          categories: categories?.length ? categories : undefined,
          include_uncategorized: uncategorized,
          knowledge_space: query.knowledge_space,
          include_deleted: withDeleted,
        },
        offset: paged ? query.offset : 0,
        limit: paged ? query.limit : SEARCH_WINDOW,
        highlight: paged,
        log: query.log_query_type && query.offset === 0 ? { type: query.log_query_type, user_id: actor.id } : undefined,
      },
      actor,
      request.requestId,
    );
    const logged = ranking.search_query_id === undefined ? {} : { search_query_id: ranking.search_query_id };
    if (!ranking.items.length) return { ...logged, total: ranking.total, _links: { self: { href: url } }, items: [] };
    where.push(sql`q.id = any(${ranking.items.map((i) => i.id)}::int[])`);
    if (paged) {
      // The page as ranked; the conditions again, for a question changed since the index saw it.
      const rows = await sql<QuestionRowWithRelations>`${questionsWithRelations(sql.join(where, sql` and `))}
        order by array_position(${ranking.items.map((i) => i.id)}::int[], q.id)`.execute(db);
      const items = await presentQuestions(db, rows.rows, { translations: query.translations ?? languages ?? [] });
      const ranked = new Map(ranking.items.map((i) => [i.id, i]));
      for (const item of items) {
        const { score, is_relevant, highlighting } = ranked.get(item.id)!;
        item.search_metadata = { score, is_relevant, ...(highlighting ? { highlighting } : {}) };
      }
      return { ...logged, total: ranking.total, _links: { self: { href: url } }, items };
    }
  }

  const condition = sql.join(where, sql` and `);
  const spaceCondition = [
    query.knowledge_space !== undefined ? sql`c.knowledge_space_id = ${query.knowledge_space}` : sql`true`,
    hidden.length ? sql`c.knowledge_space_id not in (${sql.join(hidden)})` : sql`true`,
    languages ? sql`c.language in (${sql.join(languages)})` : sql`true`,
  ];
  const countQuery =
    countable && !ranking
      ? sql`select coalesce(sum(c.n), 0)::int as total from question_counts c where ${sql.join(spaceCondition, sql` and `)}`
      : sql`select count(*)::int as total from questions q where ${condition}`;
  const order = orderBy(
    query.sort,
    filters.has('trending'),
    ranking?.items.map((i) => i.id),
  );
  // The count and the page in one statement, one round trip (the page first, then its rows' tags
  // and category: the outer select runs only for the rows of the page, not for the ones OFFSET
  // skips); an empty page is one row without a question. The LIMIT is written into the text (a
  // validated integer), and so is the first page's missing OFFSET: as parameters, Postgres's plan
  // for any value (it assumes a tenth of the table) costs more than one for the values given, so
  // it planned the statement anew on every run, which cost it more than running it. A later page's
  // OFFSET stays a parameter: an offset in the text would make a text (parsed and planned) of each.
  const paging = query.offset ? sql`limit ${sql.lit(query.limit)} offset ${query.offset}` : sql`limit ${sql.lit(query.limit)}`;
  const { rows } = await sql<QuestionRowWithRelations & { list_total: number }>`select counted.total as list_total, q.*
    from (${countQuery}) counted
    left join lateral (${questionsWithRelations(sql`true`, sql`(select q.* from questions q where ${condition} order by ${order} ${paging})`)}) q on true
    order by ${order}`.execute(db);
  const translations = query.translations ?? languages ?? [];
  const items: Question[] = await presentQuestions(
    db,
    rows.filter((r) => r.id !== null),
    { translations },
  );
  const total = rows[0]?.list_total ?? 0;
  if (!ranking || searchText === undefined) return { total, _links: { self: { href: url } }, items };

  const scores = new Map(ranking.items.map((i) => [i.id, i]));
  const { items: highlights } = items.length
    ? await search.highlight(
        { query: searchText, fields, stop_languages: stopLanguages, ids: items.map((q) => q.id) },
        actor,
        request.requestId,
      )
    : { items: [] };
  const highlighting = new Map(highlights.map((h) => [h.id, h.highlighting]));
  for (const item of items) {
    const match = scores.get(item.id)!;
    const h = highlighting.get(item.id);
    item.search_metadata = { score: match.score, is_relevant: match.is_relevant, ...(h ? { highlighting: h } : {}) };
  }
  const logged = ranking.search_query_id === undefined ? {} : { search_query_id: ranking.search_query_id };
  return { ...logged, total, _links: { self: { href: url } }, items };
}

/**
 * Questions ranked elsewhere (similar questions), in that order: those the caller may see, one
 * page of them, each with `search_metadata.score`.
 */
async function presentRanked(
  db: Db<ContentSchema>,
  actor: Actor,
  ranked: ReadonlyArray<{ id: number; score: number }>,
  page: { limit: number; offset: number },
) {
  if (!ranked.length) return { total: 0, items: [] };
  const hidden = await hiddenSpaces(db, actor);
  const ids = ranked.map((r) => r.id);
  const visible = await sql<{ id: number }>`select q.id from questions q
    where q.id = any(${ids}::int[]) and q.is_published and not q.is_deleted
      ${hidden.length ? sql`and (q.knowledge_space_id is null or q.knowledge_space_id not in (${sql.join(hidden)}))` : sql``}`.execute(db);
  const allowed = new Set(visible.rows.map((r) => r.id));
  const shown = ranked.filter((r) => allowed.has(r.id));
  const pageIds = shown.slice(page.offset, page.offset + page.limit).map((r) => r.id);
  if (!pageIds.length) return { total: shown.length, items: [] };
  const rows = await sql<QuestionRowWithRelations>`${questionsWithRelations(sql`q.id = any(${pageIds}::int[])`)}
    order by array_position(${pageIds}::int[], q.id)`.execute(db);
  const score = new Map(shown.map((r) => [r.id, r.score]));
  const items = await presentQuestions(db, rows.rows, { translations: [] });
  for (const item of items) item.search_metadata = { score: Math.min(1, Math.max(score.get(item.id) ?? 0, 1e-9)) };
  return { total: shown.length, items };
}

/** Lists of questions: pages filtered, sorted or searched here, and pages of questions ranked elsewhere. */
export function questionListDomain(deps: ContentDeps) {
  const { db, search } = deps;

  return {
    list: (query: ListQuestionsQuery, actor: Actor, request: { url: string; requestId: string }) =>
      listQuestions(db, search, query, actor, request),
    ranked: (actor: Actor, ranked: ReadonlyArray<{ id: number; score: number }>, page: { limit: number; offset: number }) =>
      presentRanked(db, actor, ranked, page),
  };
}
