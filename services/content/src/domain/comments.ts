import { writeEvent } from '@kn/bus';
import { type Actor, conflict, forbidden, notFound } from '@kn/contracts';
import { type Executor, isUniqueViolation } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SolutionRow } from '../db/solutions-tables.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { canEdit, requireOpenQuestion, requirePublishedSolution, visibleQuestion, visibleSolution } from './access.ts';
import { cleanDescription } from './descriptions.ts';
import { questionSummary } from './question-presenters.ts';
import { eventComment, presentComment, presentSolution, touchQuestion, writeSolutionEvent } from './solutions-common.ts';

async function solutionAuthor(db: Executor<ContentSchema>, solutionId: number | null) {
  if (solutionId === null) return null;
  const s = await db.selectFrom('solutions').select('author_id').where('id', '=', solutionId).executeTakeFirst();
  return s?.author_id ?? null;
}

/** A live comment the caller can see (through its question), or 404. */
async function visibleComment(db: Executor<ContentSchema>, id: number, actor: Actor, options: { lock?: boolean } = {}) {
  let query = db.selectFrom('comments').selectAll().where('id', '=', id).where('is_deleted', '=', false);
  if (options.lock) query = query.forUpdate();
  const comment = await query.executeTakeFirst();
  if (!comment) throw notFound('comment');
  const question = await visibleQuestion(db, comment.question_id, actor).catch(() => {
    throw notFound('comment');
  });
  return { comment, question };
}

/**
 * Live comments of the question and of its published, live solutions, oldest first: for a
 * question the caller was already allowed to see.
 */
export async function visibleComments(db: Executor<ContentSchema>, questionId: number) {
  const rows = await db
    .selectFrom('comments as c')
    .leftJoin('solutions as s', 's.id', 'c.solution_id')
    .selectAll('c')
    .where('c.question_id', '=', questionId)
    .where('c.is_deleted', '=', false)
    .where((eb) => eb.or([eb('c.solution_id', 'is', null), eb.and([eb('s.is_published', '=', true), eb('s.is_deleted', '=', false)])]))
    .orderBy('c.id')
    .execute();
  return rows.map(presentComment);
}

export function commentsDomain(deps: ContentDeps) {
  const { db, text } = deps;

  return {
    async create(actor: Actor, target: { questionId: number } | { solutionId: number }, description: string) {
      // Before the transaction: a large description takes a worker's time, not a connection's.
      const sanitized = await text.sanitize(description);
      const row = await db.transaction().execute(async (tx) => {
        let question: QuestionRow;
        let solutionId: number | null = null;
        let solutionAuthorId: number | null = null;
        if ('solutionId' in target) {
          const found = await visibleSolution(tx, target.solutionId, actor);
          requirePublishedSolution(found.solution);
          question = found.question;
          solutionId = found.solution.id;
          solutionAuthorId = found.solution.author_id;
        } else {
          question = await visibleQuestion(tx, target.questionId, actor);
        }
        requireOpenQuestion(question);
        const clean = await cleanDescription(tx, sanitized, question.language);
        const comment = await tx
          .insertInto('comments')
          .values({
            question_id: question.id,
            solution_id: solutionId,
            author_id: actor.id,
            description: clean.html,
            text: clean.text,
            language: clean.language,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await touchQuestion(tx, question.id);
        await writeEvent(
          tx,
          'content.comment.created.v1',
          { comment: eventComment(comment, solutionAuthorId), question: await questionSummary(tx, question), mentions: clean.mentions },
          { actorId: actor.id },
        );
        return comment;
      });
      return presentComment(row);
    },

    async list(actor: Actor, questionId: number) {
      await visibleQuestion(db, questionId, actor);
      const items = await visibleComments(db, questionId);
      return { total: items.length, items };
    },

    async update(actor: Actor, id: number, description: string) {
      const sanitized = await text.sanitize(description);
      const row = await db.transaction().execute(async (tx) => {
        const { comment, question } = await visibleComment(tx, id, actor, { lock: true });
        if (!canEdit(comment, actor)) throw forbidden('only the author or a content admin may change a comment');
        const clean = await cleanDescription(tx, sanitized, question.language);
        const now = new Date();
        const updated = await tx
          .updateTable('comments')
          .set({ description: clean.html, text: clean.text, language: clean.language, updated: now, content_updated: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeEvent(
          tx,
          'content.comment.updated.v1',
          {
            comment: eventComment(updated, await solutionAuthor(tx, updated.solution_id)),
            question: await questionSummary(tx, question),
            mentions: clean.mentions,
          },
          { actorId: actor.id },
        );
        return updated;
      });
      return presentComment(row);
    },

    async remove(actor: Actor, id: number) {
      await db.transaction().execute(async (tx) => {
        const { comment, question } = await visibleComment(tx, id, actor, { lock: true });
        if (!canEdit(comment, actor)) throw forbidden('only the author or a content admin may delete a comment');
        const updated = await tx
          .updateTable('comments')
          .set({ is_deleted: true, updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeEvent(
          tx,
          'content.comment.deleted.v1',
          { comment: eventComment(updated, await solutionAuthor(tx, updated.solution_id)), question: await questionSummary(tx, question) },
          { actorId: actor.id },
        );
      });
    },

    /**
     * Upgrades a comment to a published solution of its question, written by the comment's
     * author. Allowed to the comment author, the question poser and content admins. The comment
     * is marked deleted (it lives on as the solution).
     */
    async toSolution(actor: Actor, id: number) {
      const row = await db.transaction().execute(async (tx) => {
        const { comment, question } = await visibleComment(tx, id, actor, { lock: true });
        if (!canEdit(comment, actor) && question.author_id !== actor.id)
          throw forbidden('only the comment author, the question poser or a content admin may turn a comment into a solution');
        requireOpenQuestion(question);
        const now = new Date();
        let solution: SolutionRow;
        try {
          solution = await tx
            .insertInto('solutions')
            .values({
              question_id: question.id,
              author_id: comment.author_id,
              description: comment.description,
              text: comment.text,
              language: comment.language,
              is_published: true,
              published: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
        } catch (err) {
          if (isUniqueViolation(err)) throw conflict('conflicting solution');
          throw err;
        }
        const converted = await tx
          .updateTable('comments')
          .set({ is_deleted: true, converted_solution_id: solution.id, updated: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await touchQuestion(tx, question.id);
        await writeSolutionEvent(
          tx,
          'content.comment.converted.v1',
          { comment: eventComment(converted, await solutionAuthor(tx, converted.solution_id)), solution, question },
          { actorId: actor.id },
        );
        return solution;
      });
      return presentSolution(row);
    },
  };
}
