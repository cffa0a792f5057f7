import { writeEvent } from '@kn/bus';
import { type Actor, conflict, forbidden, notFound, publishValidationError, type Question } from '@kn/contracts';
import { type Executor, json, sql, type Tx } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { canEdit, canSeeSpace, visibleQuestion, visibleQuestionWithRelations } from './access.ts';
import { findCategory } from './categories.ts';
import { languageOf, liveMentions } from './descriptions.ts';
import { getNetworkSettings } from './network.ts';
import { presentQuestions, questionSnapshot } from './question-presenters.ts';
import { slugify } from './slug.ts';
import { ensureTags } from './tags.ts';

export const TITLE_MIN = 10;
export const TITLE_MAX = 100;

/** The commands on questions: create, change, publish, delete, restore, flag, follow. */

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

export function questionsDomain(deps: ContentDeps) {
  const { db, search, text: textWork } = deps;

  async function publishEvent(
    tx: Tx<ContentSchema>,
    subject: 'content.question.deleted.v1' | 'content.question.restored.v1' | 'content.question.created.v1',
    row: QuestionRow,
    actor: Actor,
  ) {
    // The three subjects share one payload shape.
    await writeEvent(tx, subject as 'content.question.created.v1', { question: await questionSnapshot(tx, row) }, { actorId: actor.id });
  }

  /** Deletes or restores the question; one already in that state stays as it is, without an event. */
  async function setDeleted(id: number, actor: Actor, deleted: boolean) {
    await db.transaction().execute(async (tx) => {
      const row = await visibleQuestion(tx, id, actor, { lock: true });
      if (!canEdit(row, actor))
        throw forbidden(`only the author and content administrators may ${deleted ? 'delete' : 'restore'} a question`);
      if (row.is_deleted === deleted) return;
      const updated = await tx
        .updateTable('questions')
        .set({ is_deleted: deleted, updated: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await publishEvent(tx, deleted ? 'content.question.deleted.v1' : 'content.question.restored.v1', updated, actor);
    });
  }

  return {
    async create(input: CreateQuestionInput, actor: Actor): Promise<Question> {
      // Before the transaction: a large description takes a worker's time, not a connection's.
      const html = input.description == null ? null : await textWork.sanitize(input.description);
      return db.transaction().execute(async (tx) => {
        const title = input.title?.trim() ?? '';
        const category_id = await requireCategory(tx, input.category);
        const knowledge_space_id = await requireSpace(tx, input.knowledge_space, actor);
        const fallback = (await getNetworkSettings(tx)).default_language;
        const language = input.language ?? languageOf(`${title} ${html?.text ?? ''}`, fallback);
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

    /**
     * GET /questions/:id: counts a view of a published question, once per person and day (UTC);
     * no event per view (docs/content.md): the counted view is added to the question's tally,
     * which jobs/view-events.ts sends as one event for many questions. One statement: the count
     * moves only when the day's row is new. Each read also removes a few rows of past days (they
     * no longer decide anything): every counted view comes with a read, so they go at least as
     * fast as they come, and SKIP LOCKED keeps concurrent reads from waiting on each other's removals.
     */
    async view(id: number, actor: Actor): Promise<Question> {
      let row = await visibleQuestionWithRelations(db, id, actor);
      if (row.is_published && !row.is_deleted) {
        const today = sql`(now() at time zone 'UTC')::date`;
        const counted = await sql<{ view_count: number }>`
          with past as (
            delete from question_views where (day, question_id, user_id) in (
              select day, question_id, user_id from question_views where day < ${today} limit 10 for update skip locked)
          ), first_today as (
            insert into question_views (day, question_id, user_id) values (${today}, ${id}, ${actor.id})
            on conflict do nothing returning question_id
          ), counted as (
            update questions set view_count = view_count + 1 where id = (select question_id from first_today)
            returning id, view_count, solution_count
          ), tallied as (
            insert into question_view_tallies (question_id, views, solved_views)
            select id, 1, (solution_count > 0)::int from counted
            on conflict (question_id) do update
              set views = question_view_tallies.views + 1, solved_views = question_view_tallies.solved_views + excluded.solved_views
          )
          select view_count from counted`
          .execute(db)
          .then((r) => r.rows[0]);
        if (counted) row = { ...row, view_count: counted.view_count };
      }
      return (await presentQuestions(db, [row]))[0];
    },

    async update(id: number, input: UpdateQuestionInput, actor: Actor): Promise<Question> {
      const sanitized = input.description == null ? null : await textWork.sanitize(input.description);
      return db.transaction().execute(async (tx) => {
        const row = await visibleQuestion(tx, id, actor, { lock: true });
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
          if ((sanitized?.html ?? null) !== row.description) {
            set.description = sanitized?.html ?? null;
            text = sanitized?.text ?? '';
            set.description_text = text;
            set.mentions = await liveMentions(tx, sanitized?.mentions ?? []);
            changed.push('description');
          }
        }
        const language = input.language ?? (changed.length ? languageOf(`${set.title ?? row.title} ${text}`, row.language) : row.language);
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
        const snapshot = await questionSnapshot(tx, updated);
        await writeEvent(
          tx,
          'content.question.updated.v1',
          { question: snapshot, changed, new_mentions: newMentions, followers: snapshot.followers },
          { actorId: actor.id },
        );
        return (await presentQuestions(tx, [updated]))[0];
      });
    },

    async publish(id: number, actor: Actor, requestId: string) {
      const published = await db.transaction().execute(async (tx) => {
        const row = await visibleQuestion(tx, id, actor, { lock: true });
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
        const snapshot = await questionSnapshot(tx, updated);
        return writeEvent(
          tx,
          'content.question.published.v1',
          { question: snapshot, followers: snapshot.followers },
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
            knowledge_space_id: data.question.knowledge_space_id,
          },
        },
        actor,
        requestId,
      );
      return { number_of_experts: experts.length };
    },

    remove: (id: number, actor: Actor) => setDeleted(id, actor, true),

    restore: (id: number, actor: Actor) => setDeleted(id, actor, false),

    async flag(id: number, message: string | null | undefined, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const row = await visibleQuestion(tx, id, actor, { lock: true });
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
        const row = await visibleQuestion(tx, id, actor);
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
