import { writeEvent } from '@kn/bus';
import { type Actor, conflict, forbidden, notFound, publishValidationError, type Question, type QuestionSnapshot } from '@kn/contracts';
import { type Db, type Executor, json, sql, type Tx } from '@kn/db';
import { detectLanguage } from '@kn/similarity';
import type { CategoryRow, QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import { findCategory, presentCategory } from './categories.ts';
import { sanitizeDescription } from './html.ts';
import { canSeeSpace, isContentAdmin } from './knowledge-spaces.ts';
import { getNetworkSettings } from './network.ts';
import type { SearchClient } from './search.ts';
import { slugify } from './slug.ts';
import { ensureTags } from './tags.ts';

/** Deprecated field: the same image for every question. */
export const QUESTION_IMAGE = '/api/v1/public/images/question-default.png';
export const TITLE_MIN = 10;
export const TITLE_MAX = 100;

type QuestionTag = { question_id: number; id: string; label: string };

async function tagsOf(db: Executor<ContentSchema>, ids: number[]): Promise<Map<number, QuestionTag[]>> {
  const map = new Map<number, QuestionTag[]>();
  if (ids.length === 0) return map;
  const rows = await db
    .selectFrom('question_tags')
    .innerJoin('tags', 'tags.id', 'question_tags.tag_id')
    .select(['question_tags.question_id', 'tags.id', 'tags.label'])
    .where('question_tags.question_id', 'in', ids)
    .orderBy('question_tags.question_id')
    .orderBy('question_tags.position')
    .execute();
  for (const r of rows) {
    const list = map.get(r.question_id) ?? [];
    list.push(r);
    map.set(r.question_id, list);
  }
  return map;
}

/** A question row that already carries its tags and category (see question-list.ts), saving two queries. */
export type QuestionRowWithRelations = QuestionRow & {
  tag_list: Array<Pick<QuestionTag, 'id' | 'label'>>;
  category_row: CategoryRow | null;
};

/** The Question resources of these rows, in their order. */
export async function presentQuestions(
  db: Executor<ContentSchema>,
  rows: QuestionRow[] | QuestionRowWithRelations[],
  options: { translations?: readonly string[] } = {},
): Promise<Question[]> {
  const withRelations = rows.length > 0 && 'tag_list' in rows[0];
  const categoryIds = [...new Set(rows.map((r) => r.category_id).filter((c): c is number => c !== null))];
  const [tags, categoryRows] = withRelations
    ? [
        new Map((rows as QuestionRowWithRelations[]).map((r) => [r.id, r.tag_list])),
        (rows as QuestionRowWithRelations[]).flatMap((r) => (r.category_row ? [r.category_row] : [])),
      ]
    : await Promise.all([
        tagsOf(
          db,
          rows.map((r) => r.id),
        ),
        categoryIds.length ? db.selectFrom('categories').selectAll().where('id', 'in', categoryIds).execute() : Promise.resolve([]),
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

/** The question as events carry it. */
export async function questionSnapshot(db: Executor<ContentSchema>, row: QuestionRow): Promise<QuestionSnapshot> {
  const tags = (await tagsOf(db, [row.id])).get(row.id) ?? [];
  const category = row.category_id === null ? undefined : await findCategory(db, row.category_id);
  const space =
    row.knowledge_space_id === null
      ? undefined
      : await db.selectFrom('knowledge_spaces').select(['id', 'is_closed']).where('id', '=', row.knowledge_space_id).executeTakeFirst();
  return toQuestionSnapshot(
    row,
    tags,
    category ? { id: category.id, name: category.name } : null,
    space ? { id: space.id, is_closed: space.is_closed } : null,
  );
}

/** The question as events carry it, from what the caller already has. */
export function toQuestionSnapshot(
  row: QuestionRow,
  tags: Array<{ id: string; label: string }>,
  category: QuestionSnapshot['category'],
  knowledgeSpace: QuestionSnapshot['knowledge_space'],
): QuestionSnapshot {
  return {
    id: row.id,
    author_id: row.author_id,
    is_published: row.is_published,
    published: row.published?.toISOString() ?? null,
    is_deleted: row.is_deleted,
    language: row.language,
    title: row.title,
    slug: row.slug,
    description: row.description,
    description_text: row.description_text,
    mentions: row.mentions,
    tags: tags.map((t) => ({ id: t.id, label: t.label })),
    category,
    knowledge_space: knowledgeSpace,
    solution_count: row.solution_count,
    view_count: row.view_count,
    upvote_count: row.upvote_count,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
    content_updated: row.content_updated.toISOString(),
    last_activity: row.last_activity.toISOString(),
  };
}

export async function followersOf(db: Executor<ContentSchema>, questionId: number): Promise<number[]> {
  const rows = await db.selectFrom('question_follows').select('user_id').where('question_id', '=', questionId).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}

/**
 * Whether the caller may see the question: content administrators see everything, the author
 * their own drafts and deleted questions, everyone else published, live questions of spaces they
 * may see.
 */
export async function canView(db: Executor<ContentSchema>, row: QuestionRow, actor: Actor | null): Promise<boolean> {
  if (isContentAdmin(actor)) return true;
  if (actor && row.author_id === actor.id) return true;
  if (!row.is_published || row.is_deleted) return false;
  return canSeeSpace(db, row.knowledge_space_id, actor);
}

export const canEdit = (row: QuestionRow, actor: Actor) => row.author_id === actor.id || isContentAdmin(actor);

/** The question if the caller may see it, else 404 (an invisible question does not exist for them). */
export async function findVisibleQuestion(db: Executor<ContentSchema>, id: number, actor: Actor | null, lock = false) {
  let query = db.selectFrom('questions').selectAll().where('id', '=', id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row || !(await canView(db, row, actor))) throw notFound('question');
  return row;
}

/** Mentioned ids that are live users (per the users projection), in order. */
async function liveMentions(db: Executor<ContentSchema>, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('user_projection').select('id').where('id', 'in', ids).where('is_deleted', '=', false).execute();
  const live = new Set(rows.map((r) => r.id));
  return ids.filter((id) => live.has(id));
}

async function requireCategory(db: Executor<ContentSchema>, id: number | null | undefined) {
  if (id === null || id === undefined) return null;
  const category = await findCategory(db, id);
  if (!category) throw notFound('category');
  return category.id;
}

async function requireSpace(db: Executor<ContentSchema>, id: number | null | undefined, actor: Actor) {
  if (id === null || id === undefined) return null;
  const space = await db.selectFrom('knowledge_spaces').select('id').where('id', '=', id).executeTakeFirst();
  if (!space) throw notFound('knowledge space');
  if (!(await canSeeSpace(db, id, actor))) throw forbidden('only members can post in this knowledge space');
  return id;
}

async function setTags(tx: Tx<ContentSchema>, questionId: number, tagIds: string[]) {
  await tx.deleteFrom('question_tags').where('question_id', '=', questionId).execute();
  if (tagIds.length)
    await tx
      .insertInto('question_tags')
      .values(tagIds.map((tag_id, position) => ({ question_id: questionId, tag_id, position })))
      .execute();
}

function titleProblems(title: string) {
  const n = [...title].length;
  if (n === 0) return { code: 'too_small', message: 'a published question needs a title' };
  if (n < TITLE_MIN) return { code: 'too_small', message: `title must have ${TITLE_MIN} to ${TITLE_MAX} characters` };
  if (n > TITLE_MAX) return { code: 'too_big', message: `title must have ${TITLE_MIN} to ${TITLE_MAX} characters` };
  return null;
}

export interface CreateQuestionInput {
  title?: string;
  description?: string | null;
  language?: string;
  category?: number | null;
  knowledge_space?: number | null;
  tags?: string[];
}

export interface UpdateQuestionInput {
  title?: string;
  description?: string | null;
  language?: string;
  category?: number | null;
}

export function questionsDomain(db: Db<ContentSchema>, search: SearchClient) {
  async function publishEvent(
    tx: Tx<ContentSchema>,
    subject: 'content.question.deleted.v1' | 'content.question.restored.v1' | 'content.question.created.v1',
    row: QuestionRow,
    actor: Actor,
  ) {
    // The three subjects share one payload shape.
    await writeEvent(tx, subject as 'content.question.created.v1', { question: await questionSnapshot(tx, row) }, { actorId: actor.id });
  }

  return {
    async create(input: CreateQuestionInput, actor: Actor): Promise<Question> {
      return db.transaction().execute(async (tx) => {
        const title = input.title?.trim() ?? '';
        const html = input.description == null ? null : sanitizeDescription(input.description);
        const category_id = await requireCategory(tx, input.category);
        const knowledge_space_id = await requireSpace(tx, input.knowledge_space, actor);
        const fallback = (await getNetworkSettings(tx)).default_language;
        const language = input.language ?? detectLanguage(`${title} ${html?.text ?? ''}`, fallback);
        const row = await tx
          .insertInto('questions')
          .values({
            author_id: actor.id,
            language,
            title,
            slug: slugify(title),
            description: html?.html ?? null,
            description_text: html?.text ?? '',
            mentions: await liveMentions(tx, html?.mentions ?? []),
            category_id,
            knowledge_space_id,
            translations: json([]),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const tags = await ensureTags(tx, input.tags ?? [], actor.id);
        await setTags(
          tx,
          row.id,
          tags.map((t) => t.id),
        );
        await publishEvent(tx, 'content.question.created.v1', row, actor);
        return (await presentQuestions(tx, [row]))[0];
      });
    },

    /** GET /questions/:id: counts a view of a published question (no event per view: see docs/content.md). */
    async view(id: number, actor: Actor): Promise<Question> {
      let row = await findVisibleQuestion(db, id, actor);
      if (row.is_published && !row.is_deleted) {
        const counted = await db
          .updateTable('questions')
          .set((eb) => ({ view_count: eb('view_count', '+', 1) }))
          .where('id', '=', id)
          .returning('view_count')
          .executeTakeFirst();
        if (counted) row = { ...row, view_count: counted.view_count };
      }
      return (await presentQuestions(db, [row]))[0];
    },

    async get(id: number, actor: Actor): Promise<Question> {
      return (await presentQuestions(db, [await findVisibleQuestion(db, id, actor)]))[0];
    },

    async update(id: number, input: UpdateQuestionInput, actor: Actor): Promise<Question> {
      return db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor, true);
        if (!canEdit(row, actor)) throw forbidden('only the author and content administrators may edit a question');
        if (row.is_deleted) throw conflict('the question is deleted; restore it first');
        const changed: string[] = [];
        const set: Partial<{
          title: string;
          slug: string;
          description: string | null;
          description_text: string;
          mentions: number[];
          language: string;
          category_id: number | null;
        }> = {};
        if (input.title !== undefined && input.title !== row.title) {
          set.title = input.title;
          set.slug = slugify(input.title);
          changed.push('title');
        }
        let text = row.description_text;
        if (input.description !== undefined) {
          const html = input.description === null ? null : sanitizeDescription(input.description);
          if ((html?.html ?? null) !== row.description) {
            set.description = html?.html ?? null;
            text = html?.text ?? '';
            set.description_text = text;
            set.mentions = await liveMentions(tx, html?.mentions ?? []);
            changed.push('description');
          }
        }
        const language =
          input.language ?? (changed.length ? detectLanguage(`${set.title ?? row.title} ${text}`, row.language) : row.language);
        if (language !== row.language) {
          set.language = language;
          changed.push('language');
        }
        if (input.category !== undefined) {
          const category_id = await requireCategory(tx, input.category);
          if (category_id !== row.category_id) {
            set.category_id = category_id;
            changed.push('category');
          }
        }
        if (changed.length === 0) return (await presentQuestions(tx, [row]))[0];
        const now = new Date();
        const contentChanged = changed.some((c) => c !== 'category');
        const updated = await tx
          .updateTable('questions')
          .set({
            ...set,
            updated: now,
            ...(contentChanged ? { content_updated: now } : {}),
            ...(contentChanged && row.is_published ? { last_activity: now } : {}),
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const newMentions = updated.mentions.filter((m) => !row.mentions.includes(m));
        await writeEvent(
          tx,
          'content.question.updated.v1',
          { question: await questionSnapshot(tx, updated), changed, new_mentions: newMentions, followers: await followersOf(tx, id) },
          { actorId: actor.id },
        );
        return (await presentQuestions(tx, [updated]))[0];
      });
    },

    async publish(id: number, actor: Actor, requestId: string) {
      const published = await db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor, true);
        if (!canEdit(row, actor)) throw forbidden('only the author and content administrators may publish a question');
        if (row.is_deleted) throw conflict('the question is deleted');
        if (row.is_published) throw conflict('the question is already published');
        const problem = titleProblems(row.title);
        if (problem) throw publishValidationError(problem.message, [{ path: 'title', ...problem }]);
        const hasTags = await tx.selectFrom('question_tags').select('tag_id').where('question_id', '=', id).limit(1).executeTakeFirst();
        if (!hasTags) {
          const labels = await search.suggestTags({ title: row.title, description: row.description_text }, actor, requestId);
          const tags = labels.length
            ? await tx
                .selectFrom('tags')
                .select(['id', 'label'])
                .where(sql<boolean>`lower(label) in (${sql.join(labels.map((l) => l.toLowerCase()))})`)
                .where('excluded_from_suggestions', '=', false)
                .execute()
            : [];
          // In the order search ranked them.
          const rank = (label: string) => labels.findIndex((l) => l.toLowerCase() === label.toLowerCase());
          await setTags(
            tx,
            id,
            tags.sort((a, b) => rank(a.label) - rank(b.label)).map((t) => t.id),
          );
        }
        const now = new Date();
        const updated = await tx
          .updateTable('questions')
          .set({ is_published: true, published: now, last_activity: now, updated: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return writeEvent(
          tx,
          'content.question.published.v1',
          { question: await questionSnapshot(tx, updated), followers: await followersOf(tx, id) },
          { actorId: actor.id },
        );
      });
      // The question is published: now it goes to the experts (the search service's routing
      // consumer makes the same decision from the event if this call does not get through).
      const { id: eventId, data } = published;
      const experts = await search.route(
        {
          event_id: eventId,
          reason: 'published',
          requested_by: null,
          question: {
            id,
            title: data.question.title,
            text: data.question.description_text,
            tags: data.question.tags.map((t) => t.label),
            language: data.question.language,
            author_id: data.question.author_id,
            knowledge_space_id: data.question.knowledge_space?.id ?? null,
          },
        },
        actor,
        requestId,
      );
      return { number_of_experts: experts.length };
    },

    async remove(id: number, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor, true);
        if (!canEdit(row, actor)) throw forbidden('only the author and content administrators may delete a question');
        if (row.is_deleted) return;
        const updated = await tx
          .updateTable('questions')
          .set({ is_deleted: true, updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await publishEvent(tx, 'content.question.deleted.v1', updated, actor);
      });
    },

    async restore(id: number, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor, true);
        if (!canEdit(row, actor)) throw forbidden('only the author and content administrators may restore a question');
        if (!row.is_deleted) return;
        const updated = await tx
          .updateTable('questions')
          .set({ is_deleted: false, updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await publishEvent(tx, 'content.question.restored.v1', updated, actor);
      });
    },

    async flag(id: number, message: string | null | undefined, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor, true);
        if (!row.is_published || row.is_deleted) throw notFound('question');
        const flag = await tx
          .insertInto('question_flags')
          .values({ question_id: id, user_id: actor.id, message: message?.trim() || null })
          .returningAll()
          .executeTakeFirstOrThrow();
        const updated = await tx
          .updateTable('questions')
          .set((eb) => ({ flag_count: eb('flag_count', '+', 1) }))
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeEvent(
          tx,
          'content.question.flagged.v1',
          {
            question: await questionSnapshot(tx, updated),
            flag: { id: flag.id, user_id: flag.user_id, message: flag.message, created: flag.created.toISOString() },
          },
          { actorId: actor.id },
        );
      });
    },

    async follow(id: number, actor: Actor, follow: boolean) {
      await db.transaction().execute(async (tx) => {
        const row = await findVisibleQuestion(tx, id, actor);
        if (!row.is_published || row.is_deleted) throw notFound('question');
        const changedRows = follow
          ? await tx
              .insertInto('question_follows')
              .values({ question_id: id, user_id: actor.id })
              .onConflict((c) => c.columns(['question_id', 'user_id']).doNothing())
              .returning('user_id')
              .execute()
          : await tx
              .deleteFrom('question_follows')
              .where('question_id', '=', id)
              .where('user_id', '=', actor.id)
              .returning('user_id')
              .execute();
        if (changedRows.length === 0) return;
        await writeEvent(
          tx,
          follow ? 'content.question.followed.v1' : 'content.question.unfollowed.v1',
          { question_id: id, user_id: actor.id, author_id: row.author_id },
          { actorId: actor.id },
        );
      });
    },
  };
}

export type QuestionsDomain = ReturnType<typeof questionsDomain>;
