import { type Actor, conflict, forbidden, notFound, type ValidityPeriod } from '@kn/contracts';
import { type Executor, isUniqueViolation, sql, type Tx } from '@kn/db';
import type { UpdateObject } from 'kysely';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SolutionRow } from '../db/solutions-tables.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import {
  canEdit,
  requireLiveSolution,
  requireOpenQuestion,
  requirePublishedSolution,
  visibleQuestion,
  visibleQuestionWithRelations,
  visibleSolution,
} from './access.ts';
import { attachmentsOf } from './attachments.ts';
import { visibleComments } from './comments.ts';
import { cleanDescription, liveMentions } from './descriptions.ts';
import { mentionsOf } from './html.ts';
import { presentQuestions } from './question-presenters.ts';
import { presentAttachment, presentSolution, touchQuestion, writeSolutionEvent } from './solutions-common.ts';
import { expiryOf } from './validation.ts';

type T = Tx<ContentSchema>;

/** The caller's draft for the question, if they have one (there is at most one: a unique index). */
const findDraft = (db: Executor<ContentSchema>, questionId: number, authorId: number) =>
  db
    .selectFrom('solutions')
    .selectAll()
    .where('question_id', '=', questionId)
    .where('author_id', '=', authorId)
    .where('is_published', '=', false)
    .where('is_deleted', '=', false)
    .executeTakeFirst();

export function solutionsDomain(deps: ContentDeps) {
  const { db, text } = deps;

  /** Runs `change` on the locked solution in a transaction and answers the resulting Solution. */
  async function mutate(id: number, actor: Actor, change: (tx: T, s: SolutionRow, q: QuestionRow) => Promise<SolutionRow>) {
    const row = await db.transaction().execute(async (tx) => {
      const { solution, question } = await visibleSolution(tx, id, actor, { lock: true });
      return change(tx, solution, question);
    });
    return presentSolution(row);
  }

  const update = (tx: T, id: number, values: UpdateObject<ContentSchema, 'solutions'>) =>
    tx.updateTable('solutions').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();

  return {
    async create(actor: Actor, questionId: number, description: string) {
      // Before the transaction: a large description takes a worker's time, not a connection's.
      const sanitized = await text.sanitize(description);
      const row = await db.transaction().execute(async (tx) => {
        const question = await visibleQuestion(tx, questionId, actor);
        requireOpenQuestion(question);
        const clean = await cleanDescription(tx, sanitized, question.language);
        // One draft per person and question: a second request of the same person (another tab, a
        // second worker) waits here and then edits the draft the first one made.
        await sql`select pg_advisory_xact_lock(hashtextextended(${`content.solution-draft ${questionId} ${actor.id}`}, 0))`.execute(tx);
        const existing = await findDraft(tx, questionId, actor.id);
        const now = new Date();
        let solution: SolutionRow;
        if (existing) {
          solution = await update(tx, existing.id, {
            description: clean.html,
            text: clean.text,
            language: clean.language,
            updated: now,
            content_updated: now,
          });
        } else {
          solution = await tx
            .insertInto('solutions')
            .values({ question_id: questionId, author_id: actor.id, description: clean.html, text: clean.text, language: clean.language })
            .returningAll()
            .executeTakeFirstOrThrow();
        }
        await writeSolutionEvent(
          tx,
          'content.solution.created.v1',
          { solution, question, mentions: clean.mentions },
          { actorId: actor.id },
        );
        return solution;
      });
      const { language: _language, ...created } = presentSolution(row);
      return created;
    },

    async getDraft(actor: Actor, questionId: number) {
      await visibleQuestion(db, questionId, actor);
      const row = await findDraft(db, questionId, actor.id);
      if (!row) return undefined;
      const { accepted_by_question_poser: _accepted, ...draft } = presentSolution(row);
      return draft;
    },

    async get(actor: Actor, id: number) {
      return presentSolution((await visibleSolution(db, id, actor)).solution);
    },

    /** The question with its published, live solutions (best rated first), its comments and its own attachments. */
    async completeQuestion(actor: Actor, questionId: number) {
      const question = await visibleQuestionWithRelations(db, questionId, actor);
      const [[presented], solutions, comments, attachments] = await Promise.all([
        presentQuestions(db, [question]),
        db
          .selectFrom('solutions')
          .selectAll()
          .where('question_id', '=', question.id)
          .where('is_published', '=', true)
          .where('is_deleted', '=', false)
          .orderBy('rating', (ob) => ob.desc().nullsLast())
          .orderBy('rating_count', 'desc')
          .orderBy('id')
          .execute(),
        visibleComments(db, question.id),
        attachmentsOf(db, { questionId: question.id }),
      ]);
      return {
        ...presented,
        solutions: solutions.map(presentSolution),
        comments,
        attachments: attachments.map(presentAttachment),
      };
    },

    update: async (actor: Actor, id: number, description: string) => {
      const sanitized = await text.sanitize(description);
      return mutate(id, actor, async (tx, s, q) => {
        if (!canEdit(s, actor)) throw forbidden('only the author or a content admin may change a solution');
        requireLiveSolution(s);
        const clean = await cleanDescription(tx, sanitized, q.language);
        const now = new Date();
        const row = await update(tx, s.id, {
          description: clean.html,
          text: clean.text,
          language: clean.language,
          updated: now,
          content_updated: now,
          // An update counts as a revalidation: the period restarts.
          expires: expiryOf(s.validity_period, now),
          expired: null,
        });
        if (row.is_published) await touchQuestion(tx, q.id);
        await writeSolutionEvent(
          tx,
          'content.solution.updated.v1',
          { solution: row, question: q, mentions: clean.mentions, previous_description: s.description },
          { actorId: actor.id },
        );
        return row;
      });
    },

    publish: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        if (!canEdit(s, actor)) throw forbidden('only the author or a content admin may publish a solution');
        requireLiveSolution(s);
        if (s.is_published) throw conflict('the solution is already published');
        requireOpenQuestion(q);
        const now = new Date();
        const row = await update(tx, s.id, { is_published: true, published: now, updated: now });
        await touchQuestion(tx, q.id);
        // The stored description was sanitized when written: its mentions are read, not sanitized again.
        const mentions = await liveMentions(tx, mentionsOf(row.description));
        await writeSolutionEvent(tx, 'content.solution.published.v1', { solution: row, question: q, mentions }, { actorId: actor.id });
        return row;
      }),

    async remove(actor: Actor, id: number) {
      await mutate(id, actor, async (tx, s, q) => {
        if (!canEdit(s, actor)) throw forbidden('only the author or a content admin may delete a solution');
        if (s.is_deleted) throw notFound('solution');
        const now = new Date();
        const row = await update(tx, s.id, { is_deleted: true, deleted: now, updated: now });
        await touchQuestion(tx, q.id, { activity: false });
        await writeSolutionEvent(tx, 'content.solution.deleted.v1', { solution: row, question: q }, { actorId: actor.id });
        return row;
      });
    },

    async restore(actor: Actor, id: number) {
      await mutate(id, actor, async (tx, s, q) => {
        if (!canEdit(s, actor)) throw forbidden('only the author or a content admin may restore a solution');
        if (!s.is_deleted) throw conflict('the solution is not deleted');
        let row: SolutionRow;
        try {
          row = await update(tx, s.id, { is_deleted: false, deleted: null, updated: new Date() });
        } catch (err) {
          if (isUniqueViolation(err)) throw conflict('the author has another draft for this question');
          throw err;
        }
        await touchQuestion(tx, q.id, { activity: false });
        await writeSolutionEvent(tx, 'content.solution.restored.v1', { solution: row, question: q }, { actorId: actor.id });
        return row;
      });
    },

    rate: (actor: Actor, id: number, rating: number) =>
      mutate(id, actor, async (tx, s, q) => {
        requirePublishedSolution(s);
        if (s.author_id === actor.id) throw forbidden('authors cannot rate their own solution');
        const now = new Date();
        await tx
          .insertInto('solution_ratings')
          .values({ solution_id: s.id, user_id: actor.id, rating })
          .onConflict((oc) => oc.columns(['solution_id', 'user_id']).doUpdateSet({ rating, updated: now }))
          .execute();
        const raters = await tx
          .selectFrom('solution_ratings')
          .select(['user_id', 'rating'])
          .where('solution_id', '=', s.id)
          .orderBy('created')
          .execute();
        const average = raters.reduce((sum, r) => sum + r.rating, 0) / raters.length;
        const row = await update(tx, s.id, { rating: average, rating_count: raters.length });
        await writeSolutionEvent(
          tx,
          'content.solution.rated.v1',
          {
            solution: row,
            question: q,
            rater_id: actor.id,
            rating,
            by_question_poser: q.author_id === actor.id,
            raters: raters.map((r) => r.user_id),
          },
          { actorId: actor.id },
        );
        return row;
      }),

    accept: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        if (q.author_id !== actor.id) throw forbidden('only the question poser may accept a solution');
        requirePublishedSolution(s);
        if (s.accepted_by_question_poser) return s;
        // One accepted solution per question: accepting another moves the acceptance.
        await tx
          .updateTable('solutions')
          .set({ accepted_by_question_poser: null })
          .where('question_id', '=', q.id)
          .where('accepted_by_question_poser', 'is not', null)
          .execute();
        const row = await update(tx, s.id, { accepted_by_question_poser: new Date() });
        await touchQuestion(tx, q.id);
        await writeSolutionEvent(tx, 'content.solution.accepted.v1', { solution: row, question: q }, { actorId: actor.id });
        return row;
      }),

    upvote: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        requirePublishedSolution(s);
        if (s.author_id === actor.id) throw forbidden('authors cannot upvote their own solution');
        const inserted = await tx
          .insertInto('solution_upvotes')
          .values({ solution_id: s.id, user_id: actor.id })
          .onConflict((oc) => oc.doNothing())
          .returning('user_id')
          .executeTakeFirst();
        if (!inserted) return s;
        const row = await update(tx, s.id, { upvote_count: sql<number>`upvote_count + 1` });
        await writeSolutionEvent(
          tx,
          'content.solution.upvoted.v1',
          { solution: row, question: q, user_id: actor.id },
          { actorId: actor.id },
        );
        return row;
      }),

    removeUpvote: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        const removed = await tx
          .deleteFrom('solution_upvotes')
          .where('solution_id', '=', s.id)
          .where('user_id', '=', actor.id)
          .returning('user_id')
          .executeTakeFirst();
        if (!removed) return s;
        const row = await update(tx, s.id, { upvote_count: sql<number>`greatest(upvote_count - 1, 0)` });
        await writeSolutionEvent(
          tx,
          'content.solution.upvote-removed.v1',
          { solution: row, question: q, user_id: actor.id },
          { actorId: actor.id },
        );
        return row;
      }),

    /** The question's published, live solutions the caller upvoted. */
    async myUpvotes(actor: Actor, questionId: number) {
      const question = await visibleQuestion(db, questionId, actor);
      const rows = await db
        .selectFrom('solution_upvotes as u')
        .innerJoin('solutions as s', 's.id', 'u.solution_id')
        .select('u.solution_id')
        .where('s.question_id', '=', question.id)
        .where('u.user_id', '=', actor.id)
        .where('s.is_published', '=', true)
        .where('s.is_deleted', '=', false)
        .orderBy('u.solution_id')
        .execute();
      return { solution_ids: rows.map((r) => r.solution_id) };
    },

    async validate(actor: Actor, id: number, validity: ValidityPeriod) {
      return mutate(id, actor, async (tx, s, q) => {
        if (!canEdit(s, actor)) throw forbidden('only the solution poser or an administrator may validate a solution');
        requireLiveSolution(s);
        const now = new Date();
        const row = await update(tx, s.id, { validity_period: validity, expires: expiryOf(validity, now), expired: null, updated: now });
        await writeSolutionEvent(
          tx,
          'content.solution.validated.v1',
          { solution: row, question: q, validated_by: actor.id },
          { actorId: actor.id },
        );
        return row;
      });
    },
  };
}

export type SolutionsDomain = ReturnType<typeof solutionsDomain>;
