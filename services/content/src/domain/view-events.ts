import { writeEvent } from '@kn/bus';
import { sql, type Tx } from '@kn/db';
import type { ContentSchema } from '../db/schema.ts';

/** Questions per views event: the payload stays far below a message's size. */
const PER_EVENT = 1000;

/**
 * Sends the views counted since the last round as `content.question.views-counted.v1` and empties
 * their tallies, in one transaction: a view is in exactly one event, and the cost is one event per
 * round (per 1,000 viewed questions), whatever the number of views. Answers the questions sent.
 */
export async function sendViewCounts(tx: Tx<ContentSchema>, until: Date, maxQuestions: number): Promise<number> {
  let sent = 0;
  while (sent < maxQuestions) {
    const { rows } = await sql<{ question_id: number; views: number; solved_views: number }>`
      delete from question_view_tallies where question_id in (
        select question_id from question_view_tallies order by question_id limit ${Math.min(PER_EVENT, maxQuestions - sent)})
      returning question_id, views, solved_views`.execute(tx);
    if (!rows.length) break;
    rows.sort((a, b) => a.question_id - b.question_id);
    await writeEvent(tx, 'content.question.views-counted.v1', { until: until.toISOString(), questions: rows }, { actorId: null });
    sent += rows.length;
  }
  return sent;
}
