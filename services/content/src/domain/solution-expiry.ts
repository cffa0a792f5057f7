import { writeEvent } from '@kn/bus';
import { sql, type Tx } from '@kn/db';
import type { ContentSchema } from '../db/schema.ts';
import { getNetworkSettings } from './network.ts';
import { questionSummary } from './question-presenters.ts';
import { eventSolution } from './solutions-common.ts';

/**
 * Announces solutions whose validity ran out (content.solution.expired.v1) while the network's
 * solution_validation_enabled is on, at most `batchSize` of them; answers how many. `expired` marks
 * what was announced, so each expiry is announced once however many rounds look.
 */
export async function announceExpiredSolutions(tx: Tx<ContentSchema>, batchSize: number): Promise<number> {
  if (!(await getNetworkSettings(tx)).solution_validation_enabled) return 0;
  const due = await tx
    .selectFrom('solutions')
    .selectAll()
    .where('expires', '<=', sql<Date>`now()`)
    .where('expired', 'is', null)
    .where('is_published', '=', true)
    .where('is_deleted', '=', false)
    .orderBy('expires')
    .limit(batchSize)
    .forUpdate()
    .skipLocked()
    .execute();
  for (const solution of due) {
    const row = await tx
      .updateTable('solutions')
      .set({ expired: new Date() })
      .where('id', '=', solution.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const question = await tx.selectFrom('questions').selectAll().where('id', '=', row.question_id).executeTakeFirstOrThrow();
    await writeEvent(
      tx,
      'content.solution.expired.v1',
      { solution: eventSolution(row), question: await questionSummary(tx, question) },
      { actorId: null },
    );
  }
  return due.length;
}
