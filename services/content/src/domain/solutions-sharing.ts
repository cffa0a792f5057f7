import { writeEvent } from '@kn/bus';
import type { Actor } from '@kn/contracts';
import { sql } from '@kn/db';
import type { ContentDeps } from '../handlers/deps.ts';
import { requireOpenQuestion, visibleQuestion } from './access.ts';
import { questionSummary } from './question-presenters.ts';
import { iso } from './solutions-common.ts';
import { fetchUsers, fetchUsersLenient } from './solutions-users.ts';

/** Forwarding and sharing questions, and validation requests. */
export function sharingDomain(deps: ContentDeps) {
  const { db, bus } = deps;

  return {
    async forward(actor: Actor, questionId: number, recipient: number, message: string | undefined, requestId: string) {
      requireOpenQuestion(await visibleQuestion(db, questionId, actor));
      await fetchUsers(bus, actor, [recipient], requestId, 'recipient');
      await db.transaction().execute(async (tx) => {
        const question = await visibleQuestion(tx, questionId, actor, { lock: true });
        requireOpenQuestion(question);
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
      const users = await fetchUsersLenient(
        bus,
        actor,
        rows.map((r) => r.recipient_id),
        requestId,
      );
      const items = rows.flatMap((r) => {
        const user = users.get(r.recipient_id);
        return user ? [{ user_id: r.recipient_id, user, count: Number(r.count) }] : [];
      });
      return { total: items.length, items };
    },

    async shareQuestion(actor: Actor, questionId: number, body: { recipients: number[]; message?: string }, requestId: string) {
      requireOpenQuestion(await visibleQuestion(db, questionId, actor));
      const recipients = [...new Set(body.recipients)];
      await fetchUsers(bus, actor, recipients, requestId, 'recipients');
      await db.transaction().execute(async (tx) => {
        const question = await visibleQuestion(tx, questionId, actor, { lock: true });
        requireOpenQuestion(question);
        await tx
          .insertInto('shares')
          .values({ question_id: questionId, solution_id: null, sender_id: actor.id, recipients, message: body.message ?? null })
          .execute();
        await writeEvent(
          tx,
          'content.question.shared.v1',
          { question: await questionSummary(tx, question), sender_id: actor.id, recipients, message: body.message ?? null },
          { actorId: actor.id },
        );
      });
    },

    async getValidationRequest(actor: Actor, questionId: number) {
      await visibleQuestion(db, questionId, actor);
      const row = await db
        .selectFrom('validation_requests')
        .select('last_requested')
        .where('question_id', '=', questionId)
        .executeTakeFirst();
      return { last_requested: row ? iso(row.last_requested) : null };
    },

    /** Records the request and names the expired solutions whose authors are to be asked. */
    async requestValidation(actor: Actor, questionId: number) {
      return db.transaction().execute(async (tx) => {
        const question = await visibleQuestion(tx, questionId, actor, { lock: true });
        requireOpenQuestion(question);
        const now = new Date();
        await tx
          .insertInto('validation_requests')
          .values({ question_id: questionId, requested_by: actor.id, last_requested: now })
          .onConflict((oc) => oc.column('question_id').doUpdateSet({ requested_by: actor.id, last_requested: now }))
          .execute();
        const expired = await tx
          .selectFrom('solutions')
          .select(['id', 'author_id'])
          .where('question_id', '=', questionId)
          .where('is_published', '=', true)
          .where('is_deleted', '=', false)
          .where('expires', '<=', sql<Date>`now()`)
          .orderBy('id')
          .execute();
        await writeEvent(
          tx,
          'content.question.validation-requested.v1',
          { question: await questionSummary(tx, question), requested_by: actor.id, last_requested: iso(now), expired_solutions: expired },
          { actorId: actor.id },
        );
        return { last_requested: iso(now) };
      });
    },
  };
}
