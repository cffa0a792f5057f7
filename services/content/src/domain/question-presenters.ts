import type { Question, QuestionSnapshot, QuestionSummary } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { RawBuilder } from 'kysely';
import type { CategoryRow, QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import { findCategory, presentCategory } from './categories.ts';

/** How a question is shown: the API's Question resource, and the snapshot and summary events carry. */

/** Deprecated field: the same image for every question. */
export const QUESTION_IMAGE = '/api/v1/public/images/question-default.png';

export type QuestionTag = { id: string; label: string };

/**
 * The tags of a question, in their order, as a JSON array of `{id, label}`: the one definition of
 * "the tags of a question", as a column of a larger query (lists) or by itself (`tagsOf`). Each
 * label is read by its key, not joined: a join is planned (a list's statement planned a third
 * faster without it) and may hash every tag of the network for each question of a page.
 */
export const tagListOf = (questionId: RawBuilder<unknown>) =>
  sql<QuestionTag[]>`coalesce((select json_agg(json_build_object('id', qt.tag_id,
      'label', (select t.label from tags t where t.id = qt.tag_id)) order by qt.position)
    from question_tags qt where qt.question_id = ${questionId}), '[]'::json)`;

/** Whether the poser accepted one of the question's published solutions (a list row's solved marker). */
const acceptedOf = (questionId: RawBuilder<unknown>) =>
  sql<boolean>`exists (select 1 from solutions s where s.question_id = ${questionId} and s.is_published and not s.is_deleted
    and s.accepted_by_question_poser is not null)`;

/** Questions (from `source`, the table by default) that meet `condition`, each with its tags, category and accepted mark. */
export const questionsWithRelations = (condition: RawBuilder<unknown>, source: RawBuilder<unknown> = sql`questions`) => sql`select q.*,
    ${tagListOf(sql`q.id`)} as tag_list,
    (select to_json(c) from categories c where c.id = q.category_id) as category_row,
    ${acceptedOf(sql`q.id`)} as has_accepted_solution
  from ${source} q where ${condition}`;

/** The questions among these whose poser accepted a solution. */
async function acceptedAmong(db: Executor<ContentSchema>, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: number }>`
    select q.id from unnest(${[...ids]}::int[]) as q(id) where ${acceptedOf(sql`q.id`)}`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** The tags of these questions, by question id. */
export async function tagsOf(db: Executor<ContentSchema>, ids: readonly number[]): Promise<Map<number, QuestionTag[]>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{ id: number; tags: QuestionTag[] }>`
    select q.id, ${tagListOf(sql`q.id`)} as tags from unnest(${[...ids]}::int[]) as q(id)`.execute(db);
  return new Map(rows.map((r) => [r.id, r.tags]));
}

/** A question row that already carries its tags and category (see question-list.ts), saving two queries. */
export type QuestionRowWithRelations = QuestionRow & {
  tag_list: QuestionTag[];
  category_row: CategoryRow | null;
  has_accepted_solution: boolean;
};

/** The Question resources of these rows, in their order. */
export async function presentQuestions(
  db: Executor<ContentSchema>,
  rows: QuestionRow[] | QuestionRowWithRelations[],
  options: { translations?: readonly string[] } = {},
): Promise<Question[]> {
  const withRelations = rows.length > 0 && 'tag_list' in rows[0];
  const categoryIds = [...new Set(rows.map((r) => r.category_id).filter((c): c is number => c !== null))];
  const [tags, categoryRows, accepted] = withRelations
    ? [
        new Map((rows as QuestionRowWithRelations[]).map((r) => [r.id, r.tag_list])),
        (rows as QuestionRowWithRelations[]).flatMap((r) => (r.category_row ? [r.category_row] : [])),
        new Set((rows as QuestionRowWithRelations[]).flatMap((r) => (r.has_accepted_solution ? [r.id] : []))),
      ]
    : await Promise.all([
        tagsOf(
          db,
          rows.map((r) => r.id),
        ),
        categoryIds.length ? db.selectFrom('categories').selectAll().where('id', 'in', categoryIds).execute() : Promise.resolve([]),
        acceptedAmong(
          db,
          rows.map((r) => r.id),
        ),
      ]);
  const categories = new Map(categoryRows.map((c) => [c.id, presentCategory(c)]));
  return rows.map((row) => {
    const q: Question = {
      id: row.id,
      is_published: row.is_published,
      published: row.published?.toISOString() ?? null,
      language: row.language,
      title: row.title,
      slug: row.slug,
      description: row.description,
      solution_count: row.solution_count,
      has_accepted_solution: accepted.has(row.id),
      view_count: row.view_count,
      upvote_count: row.upvote_count,
      image: QUESTION_IMAGE,
      created: row.created.toISOString(),
      updated: row.updated.toISOString(),
      content_updated: row.content_updated.toISOString(),
      last_activity: row.last_activity.toISOString(),
      is_deleted: row.is_deleted,
      attachments: `/api/v1/questions/${row.id}/attachments`,
      category: row.category_id === null ? null : (categories.get(row.category_id) ?? null),
      tag_relations: [],
      concepts: (tags.get(row.id) ?? []).map((t) => ({
        concept_id: t.id,
        primary_label: t.label,
        label_match: t.label,
        language: row.language,
        description: null,
        ontology_id: null,
        is_flat: true as const,
      })),
      knowledge_space_id: row.knowledge_space_id,
    };
    if (options.translations) {
      const wanted = options.translations.filter((l) => l !== row.language);
      q.translations = (row.translations ?? []).filter((t) => wanted.includes(t.language));
    }
    return q;
  });
}

export async function followersOf(db: Executor<ContentSchema>, questionId: number): Promise<number[]> {
  const rows = await db.selectFrom('question_follows').select('user_id').where('question_id', '=', questionId).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}

/** The question as the events of its content carry it. */
export async function questionSnapshot(db: Executor<ContentSchema>, row: QuestionRow): Promise<QuestionSnapshot> {
  const [tags, category, space, followers] = await Promise.all([
    tagsOf(db, [row.id]),
    row.category_id === null ? undefined : findCategory(db, row.category_id),
    row.knowledge_space_id === null
      ? undefined
      : db.selectFrom('knowledge_spaces').select(['id', 'is_closed']).where('id', '=', row.knowledge_space_id).executeTakeFirst(),
    followersOf(db, row.id),
  ]);
  return toQuestionSnapshot(row, {
    tags: tags.get(row.id) ?? [],
    category: category ? { id: category.id, name: category.name } : null,
    knowledgeSpace: space ? { id: space.id, is_closed: space.is_closed } : null,
    followers,
  });
}

/** The question as events carry it, from what the caller already has. */
export function toQuestionSnapshot(
  row: QuestionRow,
  relations: {
    tags: QuestionTag[];
    category: QuestionSnapshot['category'];
    knowledgeSpace: QuestionSnapshot['knowledge_space'];
    followers: number[];
  },
): QuestionSnapshot {
  return {
    ...summary(row, relations.followers),
    published: row.published?.toISOString() ?? null,
    is_deleted: row.is_deleted,
    language: row.language,
    slug: row.slug,
    description: row.description,
    description_text: row.description_text,
    mentions: row.mentions,
    tags: relations.tags.map((t) => ({ id: t.id, label: t.label })),
    category: relations.category,
    knowledge_space: relations.knowledgeSpace,
    solution_count: row.solution_count,
    view_count: row.view_count,
    upvote_count: row.upvote_count,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
    content_updated: row.content_updated.toISOString(),
    last_activity: row.last_activity.toISOString(),
  };
}

const summary = (row: QuestionRow, followers: number[]): QuestionSummary => ({
  id: row.id,
  title: row.title,
  author_id: row.author_id,
  is_published: row.is_published,
  knowledge_space_id: row.knowledge_space_id,
  followers,
});

/** The question as the events of its solutions, comments, attachments and shares carry it. */
export async function questionSummary(db: Executor<ContentSchema>, row: QuestionRow): Promise<QuestionSummary> {
  return summary(row, await followersOf(db, row.id));
}
