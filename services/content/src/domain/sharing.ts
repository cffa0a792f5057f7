import { writeEvent } from '@kn/bus';
import { type Actor, conflict } from '@kn/contracts';
import type { Executor, Tx } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SolutionRow } from '../db/solutions-tables.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { requireOpenQuestion, requirePublishedSolution, visibleQuestion, visibleSolution } from './access.ts';
import { questionSummary } from './question-presenters.ts';
import { writeSolutionEvent } from './solutions-common.ts';
import { fetchUsers, requireUsers } from './users.ts';

/** Reads what is passed on, or throws when the caller may not pass it on. */
type Check<R> = (db: Executor<ContentSchema>, options: { lock?: boolean }) => Promise<R>;
type Recipients = { actor: Actor; ids: number[]; field: string; requestId: string };

const openQuestion =
  (actor: Actor, questionId: number): Check<QuestionRow> =>
  async (db, options) => {
    const question = await visibleQuestion(db, questionId, actor, options);
    requireOpenQuestion(question);
    return question;
  };

const publishedSolution =
  (actor: Actor, solutionId: number): Check<{ solution: SolutionRow; question: QuestionRow }> =>
  async (db, options) => {
    const found = await visibleSolution(db, solutionId, actor, options);
    requirePublishedSolution(found.solution);
    return found;
  };

/** Forwarding questions to users who might answer them, and sharing questions and solutions. */
export function sharingDomain(deps: ContentDeps) {
  const { db, bus } = deps;

  /**
   * Checks what is passed on before the recipients (a 404 or 409 of it comes before a look-up of
   * users), then records it in a transaction on its locked row, checked again there.
   */
  async function passOn<R>(check: Check<R>, to: Recipients, record: (tx: Tx<ContentSchema>, checked: R) => Promise<void>) {
    await check(db, {});
    await requireUsers(bus, to.actor, to.ids, to.requestId, to.field);
    await db.transaction().execute(async (tx) => record(tx, await check(tx, { lock: true })));
  }

  return {
    async forward(actor: Actor, questionId: number, recipient: number, message: string | undefined, requestId: string) {
      const to = { actor, ids: [recipient], field: 'recipient', requestId };
      await passOn(openQuestion(actor, questionId), to, async (tx, question) => {
        await tx
          .insertInto('question_forwards')
          .values({ question_id: questionId, sender_id: actor.id, recipient_id: recipient, message: message ?? null })
          .execute();
        await writeEvent(
          tx,
          'content.question.forwarded.v1',
          { question: await questionSummary(tx, question), sender_id: actor.id, recipient_id: recipient, message: message ?? null },
          { actorId: actor.id },
        );
      });
    },

    /**
     * "Not me": the caller will not answer the question. Recorded once per person and question, and
     * announced then (a second decline changes nothing); the poser cannot decline their own question.
     */
    async decline(actor: Actor, questionId: number) {
      await db.transaction().execute(async (tx) => {
        const question = await openQuestion(actor, questionId)(tx, { lock: true });
        if (question.author_id === actor.id) throw conflict('this is your own question');
        const recorded = await tx
          .insertInto('question_declines')
          .values({ question_id: questionId, user_id: actor.id, declined_at: new Date() })
          .onConflict((c) => c.doNothing())
          .returning('user_id')
          .executeTakeFirst();
        if (recorded)
          await writeEvent(
            tx,
            'content.question.declined.v1',
            { question: await questionSummary(tx, question), user_id: actor.id },
            { actorId: actor.id },
          );
      });
    },

    /** Recipients of forwards of the question, most forwarded first. */
    async listForwards(actor: Actor, questionId: number, requestId: string) {
      await visibleQuestion(db, questionId, actor);
      const rows = await db
        .selectFrom('question_forwards')
        .select(['recipient_id', (eb) => eb.fn.countAll<number>().as('count')])
        .where('question_id', '=', questionId)
        .groupBy('recipient_id')
        .orderBy('count', 'desc')
        .orderBy('recipient_id')
        .execute();
      const users = await fetchUsers(
        bus,
        actor,
        rows.map((r) => r.recipient_id),
        requestId,
      );
      // Users the users service no longer knows are left out rather than failing the listing.
      const items = rows.flatMap((r) => {
        const user = users.get(r.recipient_id);
        return user ? [{ user_id: r.recipient_id, user, count: Number(r.count) }] : [];
      });
      return { total: items.length, items };
    },

    async shareQuestion(actor: Actor, questionId: number, body: { recipients: number[]; message?: string }, requestId: string) {
      const recipients = [...new Set(body.recipients)];
      const message = body.message ?? null;
      const to = { actor, ids: recipients, field: 'recipients', requestId };
      await passOn(openQuestion(actor, questionId), to, async (tx, question) => {
        await tx
          .insertInto('shares')
          .values({ question_id: questionId, solution_id: null, sender_id: actor.id, recipients, message })
          .execute();
        await writeEvent(
          tx,
          'content.question.shared.v1',
          { question: await questionSummary(tx, question), sender_id: actor.id, recipients, message },
          { actorId: actor.id },
        );
      });
    },

    async shareSolution(actor: Actor, solutionId: number, body: { recipients: number[]; message?: string }, requestId: string) {
      const recipients = [...new Set(body.recipients)];
      const message = body.message ?? null;
      const to = { actor, ids: recipients, field: 'recipients', requestId };
      await passOn(publishedSolution(actor, solutionId), to, async (tx, { solution, question }) => {
        await tx
          .insertInto('shares')
          .values({ question_id: question.id, solution_id: solution.id, sender_id: actor.id, recipients, message })
          .execute();
        await writeSolutionEvent(
          tx,
          'content.solution.shared.v1',
          { solution, question, sender_id: actor.id, recipients, message },
          { actorId: actor.id },
        );
      });
    },
  };
}
