import { writeEvent } from '@kn/bus';
import type { Actor } from '@kn/contracts';
import { sql } from '@kn/db';
import type { ContentDeps } from '../handlers/deps.ts';
import { requireOpenQuestion, visibleQuestion } from './access.ts';
import { questionSummary } from './question-presenters.ts';
import { iso } from './solutions-common.ts';

/** Requests to the authors of a question's expired solutions to validate them again. */
export function validationRequestsDomain(deps: ContentDeps) {
  const { db } = deps;

  return {
    async get(actor: Actor, questionId: number) {
      await visibleQuestion(db, questionId, actor);
      const row = await db
        .selectFrom('validation_requests')
        .select('last_requested')
        .where('question_id', '=', questionId)
        .executeTakeFirst();
      return { last_requested: row ? iso(row.last_requested) : null };
    },

    /** Records the request and names the expired solutions whose authors are to be asked. */
    async request(actor: Actor, questionId: number) {
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
