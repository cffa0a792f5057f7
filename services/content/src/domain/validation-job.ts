import { writeEvent } from '@kn/bus';
import { sql } from '@kn/db';
import type { ContentDeps } from '../handlers/deps.ts';
import { getNetworkSettings } from './network.ts';
import { questionSummary } from './question-presenters.ts';
import { eventSolution } from './solutions-common.ts';

/**
 * Announces expired solutions (content.solution.expired.v1) while the network's
 * solution_validation_enabled is on. Every instance runs the timer; a transaction-scoped
 * advisory lock lets one instance do a round at a time, and `expired` marks what was announced,
 * so each expiry is announced once.
 */
export function startSolutionExpiry(deps: ContentDeps, options: { intervalMs: number; batchSize?: number }) {
  const { db, logger } = deps;
  let stopped = false;
  let running: Promise<number> | undefined;

  async function round(): Promise<number> {
    return db.transaction().execute(async (tx) => {
      const { rows } = await sql<{
        locked: boolean;
      }>`select pg_try_advisory_xact_lock(hashtext('content.solution_expiry')) as locked`.execute(tx);
      if (!rows[0]?.locked) return 0;
      if (!(await getNetworkSettings(tx)).solution_validation_enabled) return 0;
      const due = await tx
        .selectFrom('solutions')
        .selectAll()
        .where('expires', '<=', sql<Date>`now()`)
        .where('expired', 'is', null)
        .where('is_published', '=', true)
        .where('is_deleted', '=', false)
        .orderBy('expires')
        .limit(options.batchSize ?? 200)
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
    });
  }

  async function tick() {
    if (stopped || running) return;
    running = round();
    try {
      const n = await running;
      if (n) logger.info({ expired: n }, 'announced expired solutions');
    } catch (err) {
      logger.warn({ err }, 'solution expiry round failed');
    } finally {
      running = undefined;
    }
  }

  const timer = setInterval(() => void tick(), options.intervalMs);
  timer.unref();
  return {
    /** One round now (tests, and the first round at start). */
    runOnce: async () => {
      while (running) await running.catch(() => 0);
      return round();
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => 0);
    },
  };
}
