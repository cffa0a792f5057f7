import { type Actor, ANALYTICS_ROLES, type AnalyticsDigest } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { AnalyticsSchema } from '../db/schema.ts';
import { viewer } from './access.ts';
import { flowReport } from './flow.ts';
import { gapsReport } from './gaps.ts';
import { healthReport } from './health.ts';

type Db = Executor<AnalyticsSchema>;
const DAY = 86_400_000;

export async function wantsDigest(db: Db, userId: number) {
  return (await db.selectFrom('digest_settings').select('weekly').where('user_id', '=', userId).executeTakeFirst())?.weekly ?? false;
}

export async function setDigest(db: Db, userId: number, weekly: boolean) {
  await db
    .insertInto('digest_settings')
    .values({ user_id: userId, weekly })
    .onConflict((c) => c.column('user_id').doUpdateSet({ weekly }))
    .execute();
}

/** The Monday (UTC) of the last whole week before `now`: the week a digest sent at `now` is about. */
export function lastWeek(now: Date): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const sinceMonday = (new Date(today).getUTCDay() + 6) % 7;
  return new Date(today - (sinceMonday + 7) * DAY);
}

/**
 * Who gets the digest of `week` and has not had it: people who asked for it, are a manager or an
 * administrator now and are not deleted. At most `limit`, the rest in the next round.
 */
export async function dueDigests(db: Db, week: Date, limit: number) {
  return db
    .selectFrom('digest_settings as s')
    .innerJoin('people as p', 'p.id', 's.user_id')
    .select(['p.id', 'p.roles'])
    .where('s.weekly', '=', true)
    .where('p.is_deleted', '=', false)
    .where(sql<boolean>`p.roles && ${sql.val([...ANALYTICS_ROLES])}::text[]`)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('digests_sent as d').select('d.user_id').whereRef('d.user_id', '=', 'p.id').where('d.week', '=', week))),
    )
    .orderBy('p.id')
    .limit(limit)
    .execute();
}

/** The week's figures as the person may see them: the same visibility and five-person floor as the API. */
export async function digestOf(db: Db, person: { id: number; roles: string[] }, week: Date, now: Date): Promise<AnalyticsDigest> {
  const who = viewer({ id: person.id, roles: person.roles, token_id: null } as Actor);
  const to = new Date(week.getTime() + 7 * DAY);
  const flow = await flowReport(db, who, { from: week, to, granularity: 'week', dimension: 'network', top: 1 }, now);
  const row = flow.rows[0];
  const health = await healthReport(db, who, { within_days: 30, after_days: 14 }, now);
  const gaps = await gapsReport(db, who, { from: week, to, top: 20 });
  return {
    week: week.toISOString().slice(0, 10),
    flow: {
      asked: row ? row.asked : 0,
      answered: row ? row.answered : 0,
      accepted: row ? row.accepted : 0,
      first_solution_p50_s: row ? row.first_solution_p50_s : null,
      unanswered: flow.backlog.unanswered,
      suppressed: (row?.suppressed ?? false) || flow.backlog.suppressed,
    },
    health: {
      expiring: health.expiring,
      expired: health.expired,
      validation_requested: health.validation_requested,
      unaccepted: health.unaccepted,
    },
    gaps: gaps.items
      .filter((g) => !g.suppressed && (g.growing_faster_than_answers || g.single_expert))
      .slice(0, 5)
      .map((g) => ({ tag: g.tag, asked: g.asked!, answered: g.answered!, experts: g.experts! })),
  };
}
