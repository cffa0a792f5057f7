import { writeEvent } from '@kn/bus';
import { type Actor, conflict, forbidden, notFound, type ValidityPeriod } from '@kn/contracts';
import { isUniqueViolation, sql, type Tx } from '@kn/db';
import type { UpdateObject } from 'kysely';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SolutionRow } from '../db/solutions-tables.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { canView, isContentAdmin, requireOpenQuestion, visibleQuestion } from './access.ts';
import { questionSummary } from './question-presenters.ts';
import { type Ex, eventSolution, presentSolution, touchQuestion } from './solutions-common.ts';
import { cleanDescription } from './solutions-text.ts';
import { fetchUsers } from './solutions-users.ts';
import { expiryOf } from './validation.ts';

type T = Tx<ContentSchema>;

/**
 * The solution and its question, or 404 when the caller may not see it: drafts and deleted
 * solutions are visible to their author and content admins only.
 */
export async function visibleSolution(ex: Ex, id: number, actor: Actor, options: { lock?: boolean } = {}) {
  let query = ex.selectFrom('solutions').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  const solution = await query.executeTakeFirst();
  if (!solution) throw notFound('solution');
  const question = await ex.selectFrom('questions').selectAll().where('id', '=', solution.question_id).executeTakeFirstOrThrow();
  if (solution.author_id !== actor.id && !isContentAdmin(actor)) {
    if (!solution.is_published || solution.is_deleted || !(await canView(ex, question, actor))) throw notFound('solution');
  }
  return { solution, question };
}

const mayEdit = (s: SolutionRow, actor: Actor) => s.author_id === actor.id || isContentAdmin(actor);
const requireLive = (s: SolutionRow) => {
  if (s.is_deleted) throw conflict('the solution is deleted');
};
const requirePublished = (s: SolutionRow) => {
  requireLive(s);
  if (!s.is_published) throw conflict('the solution is not published');
};

export function solutionsDomain(deps: ContentDeps) {
  const { db, bus } = deps;

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
      const row = await db.transaction().execute(async (tx) => {
        const question = await visibleQuestion(tx, questionId, actor);
        requireOpenQuestion(question);
        const clean = await cleanDescription(tx, description, question.language);
        // One draft per person and question: a second request of the same person (another tab, a
        // second worker) waits here and then edits the draft the first one made.
        await sql`select pg_advisory_xact_lock(hashtextextended(${`content.solution-draft ${questionId} ${actor.id}`}, 0))`.execute(tx);
        const existing = await tx
          .selectFrom('solutions')
          .selectAll()
          .where('question_id', '=', questionId)
          .where('author_id', '=', actor.id)
          .where('is_published', '=', false)
          .where('is_deleted', '=', false)
          .executeTakeFirst();
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
        await writeEvent(
          tx,
          'content.solution.created.v1',
          { solution: eventSolution(solution), question: await questionSummary(tx, question), mentions: clean.mentions },
          { actorId: actor.id },
        );
        return solution;
      });
      const { language: _language, ...created } = presentSolution(row);
      return created;
    },

    async getDraft(actor: Actor, questionId: number) {
      await visibleQuestion(db, questionId, actor);
      const row = await db
        .selectFrom('solutions')
        .selectAll()
        .where('question_id', '=', questionId)
        .where('author_id', '=', actor.id)
        .where('is_published', '=', false)
        .where('is_deleted', '=', false)
        .executeTakeFirst();
      if (!row) return undefined;
      const { accepted_by_question_poser: _accepted, ...draft } = presentSolution(row);
      return draft;
    },

    async get(actor: Actor, id: number) {
      return presentSolution((await visibleSolution(db, id, actor)).solution);
    },

    update: (actor: Actor, id: number, description: string) =>
      mutate(id, actor, async (tx, s, q) => {
        if (!mayEdit(s, actor)) throw forbidden('only the author or a content admin may change a solution');
        requireLive(s);
        const clean = await cleanDescription(tx, description, q.language);
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
        await writeEvent(
          tx,
          'content.solution.updated.v1',
          {
            solution: eventSolution(row),
            question: await questionSummary(tx, q),
            mentions: clean.mentions,
            previous_description: s.description,
          },
          { actorId: actor.id },
        );
        return row;
      }),

    publish: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        if (!mayEdit(s, actor)) throw forbidden('only the author or a content admin may publish a solution');
        requireLive(s);
        if (s.is_published) throw conflict('the solution is already published');
        requireOpenQuestion(q);
        const now = new Date();
        const row = await update(tx, s.id, { is_published: true, published: now, updated: now });
        await touchQuestion(tx, q.id);
        const { mentions } = await cleanDescription(tx, row.description, q.language);
        await writeEvent(
          tx,
          'content.solution.published.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q), mentions },
          { actorId: actor.id },
        );
        return row;
      }),

    async remove(actor: Actor, id: number) {
      await mutate(id, actor, async (tx, s, q) => {
        if (!mayEdit(s, actor)) throw forbidden('only the author or a content admin may delete a solution');
        if (s.is_deleted) throw notFound('solution');
        const now = new Date();
        const row = await update(tx, s.id, { is_deleted: true, deleted: now, updated: now });
        await touchQuestion(tx, q.id, { activity: false });
        await writeEvent(
          tx,
          'content.solution.deleted.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q) },
          { actorId: actor.id },
        );
        return row;
      });
    },

    async restore(actor: Actor, id: number) {
      await mutate(id, actor, async (tx, s, q) => {
        if (!mayEdit(s, actor)) throw forbidden('only the author or a content admin may restore a solution');
        if (!s.is_deleted) throw conflict('the solution is not deleted');
        let row: SolutionRow;
        try {
          row = await update(tx, s.id, { is_deleted: false, deleted: null, updated: new Date() });
        } catch (err) {
          if (isUniqueViolation(err)) throw conflict('the author has another draft for this question');
          throw err;
        }
        await touchQuestion(tx, q.id, { activity: false });
        await writeEvent(
          tx,
          'content.solution.restored.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q) },
          { actorId: actor.id },
        );
        return row;
      });
    },

    rate: (actor: Actor, id: number, rating: number) =>
      mutate(id, actor, async (tx, s, q) => {
        requirePublished(s);
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
        await writeEvent(
          tx,
          'content.solution.rated.v1',
          {
            solution: eventSolution(row),
            question: await questionSummary(tx, q),
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
        requirePublished(s);
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
        await writeEvent(
          tx,
          'content.solution.accepted.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q) },
          { actorId: actor.id },
        );
        return row;
      }),

    upvote: (actor: Actor, id: number) =>
      mutate(id, actor, async (tx, s, q) => {
        requirePublished(s);
        if (s.author_id === actor.id) throw forbidden('authors cannot upvote their own solution');
        const inserted = await tx
          .insertInto('solution_upvotes')
          .values({ solution_id: s.id, user_id: actor.id })
          .onConflict((oc) => oc.doNothing())
          .returning('user_id')
          .executeTakeFirst();
        if (!inserted) return s;
        const row = await update(tx, s.id, { upvote_count: sql<number>`upvote_count + 1` });
        await writeEvent(
          tx,
          'content.solution.upvoted.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q), user_id: actor.id },
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
        await writeEvent(
          tx,
          'content.solution.upvote-removed.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q), user_id: actor.id },
          { actorId: actor.id },
        );
        return row;
      }),

    async validate(actor: Actor, id: number, validity: ValidityPeriod) {
      return mutate(id, actor, async (tx, s, q) => {
        if (!mayEdit(s, actor)) throw forbidden('only the solution poser or an administrator may validate a solution');
        requireLive(s);
        const now = new Date();
        const row = await update(tx, s.id, { validity_period: validity, expires: expiryOf(validity, now), expired: null, updated: now });
        await writeEvent(
          tx,
          'content.solution.validated.v1',
          { solution: eventSolution(row), question: await questionSummary(tx, q), validated_by: actor.id },
          { actorId: actor.id },
        );
        return row;
      });
    },

    async share(actor: Actor, id: number, body: { recipients: number[]; message?: string }, requestId: string) {
      // Check the solution first (404/409 before looking up users), then the recipients.
      const { solution } = await visibleSolution(db, id, actor);
      requirePublished(solution);
      const recipients = [...new Set(body.recipients)];
      await fetchUsers(bus, actor, recipients, requestId, 'recipients');
      await db.transaction().execute(async (tx) => {
        const { solution: s, question: q } = await visibleSolution(tx, id, actor, { lock: true });
        requirePublished(s);
        await tx
          .insertInto('shares')
          .values({ question_id: q.id, solution_id: s.id, sender_id: actor.id, recipients, message: body.message ?? null })
          .execute();
        await writeEvent(
          tx,
          'content.solution.shared.v1',
          {
            solution: eventSolution(s),
            question: await questionSummary(tx, q),
            sender_id: actor.id,
            recipients,
            message: body.message ?? null,
          },
          { actorId: actor.id },
        );
      });
    },
  };
}

export type SolutionsDomain = ReturnType<typeof solutionsDomain>;
