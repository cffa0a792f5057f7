import type { HealthKind } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { RawBuilder } from 'kysely';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type Viewer, visibleQuestion } from './access.ts';

type Db = Executor<AnalyticsSchema>;
const DAY = 86_400_000;

export interface HealthWindow {
  within_days: number;
  after_days: number;
}

/**
 * Every item of the review queue the viewer may see, as one query: `kind`, the question, the
 * solution, who is responsible and since when. Validation requests are waiting per solution that
 * neither a validation nor an edit has renewed since the request.
 */
function items(viewer: Viewer, window: HealthWindow, now: Date): RawBuilder<unknown> {
  const horizon = new Date(now.getTime() + window.within_days * DAY);
  const askedBefore = new Date(now.getTime() - window.after_days * DAY);
  const live = sql`s.published_at is not null and not s.is_deleted`;
  return sql`
    select 'expiring' as kind, q.id as question_id, q.title, s.id as solution_id, s.author_id as responsible_id, s.expires as since
      from solutions s join questions q on q.id = s.question_id
     where ${live} and s.expires > ${now} and s.expires <= ${horizon} and not q.is_deleted and ${visibleQuestion(viewer)}
    union all
    select 'expired', q.id, q.title, s.id, s.author_id, s.expires
      from solutions s join questions q on q.id = s.question_id
     where ${live} and s.expires <= ${now} and not q.is_deleted and ${visibleQuestion(viewer)}
    union all
    select 'validation_requested', q.id, q.title, s.id, s.author_id, v.requested_at
      from validation_requests v join questions q on q.id = v.question_id join solutions s on s.question_id = q.id
     where ${live} and (s.renewed_at is null or s.renewed_at < v.requested_at) and v.requested_at <= ${now}
       and not q.is_deleted and ${visibleQuestion(viewer)}
    union all
    select 'unaccepted', q.id, q.title, null, q.author_id, q.asked_at
      from questions q
     where q.accepted_at is null and q.asked_at <= ${askedBefore} and not q.is_deleted and ${visibleQuestion(viewer)}`;
}

export async function healthReport(db: Db, viewer: Viewer, window: HealthWindow, now: Date) {
  const { rows } = await sql<{ kind: HealthKind; n: string }>`
    select kind, count(distinct case when kind = 'validation_requested' then question_id::text
                                     else coalesce(solution_id, question_id)::text end) as n
      from (${items(viewer, window, now)}) i group by kind`.execute(db);
  const count = (kind: HealthKind) => Number(rows.find((r) => r.kind === kind)?.n ?? 0);
  return {
    as_of: now.toISOString(),
    ...window,
    expiring: count('expiring'),
    expired: count('expired'),
    validation_requested: count('validation_requested'),
    unaccepted: count('unaccepted'),
  };
}

/**
 * The review queue, oldest first. People who are not managers see only their own items; the
 * poser of an unaccepted question is anonymous, so only they and administrators see that it is theirs.
 */
export async function reviewQueue(
  db: Db,
  viewer: Viewer,
  query: HealthWindow & { kind?: HealthKind; mine: boolean; limit: number; offset: number },
  now: Date,
) {
  const mine = query.mine || !viewer.manager;
  const where = sql.join(
    [query.kind ? sql`kind = ${query.kind}` : sql`true`, mine ? sql`responsible_id = ${viewer.id}` : sql`true`],
    sql` and `,
  );
  const { rows } = await sql<{
    kind: HealthKind;
    question_id: number;
    title: string;
    solution_id: number | null;
    responsible_id: number;
    since: Date;
    total: string;
  }>`
    select i.*, count(*) over () as total from (${items(viewer, query, now)}) i
     where ${where}
     order by since, question_id, solution_id nulls first
     limit ${query.limit} offset ${query.offset}`.execute(db);
  const total = rows.length ? Number(rows[0]!.total) : await countOnly(db, viewer, query, now, where);
  return {
    total,
    items: rows.map((r) => ({
      kind: r.kind,
      question_id: r.question_id,
      question_title: r.title,
      solution_id: r.solution_id,
      responsible_id: r.kind === 'unaccepted' && !viewer.admin && r.responsible_id !== viewer.id ? null : r.responsible_id,
      since: new Date(r.since).toISOString(),
    })),
  };
}

/** The total of a page past the end (the window count has no row to ride on). */
async function countOnly(db: Db, viewer: Viewer, window: HealthWindow, now: Date, where: RawBuilder<unknown>) {
  const { rows } = await sql<{ n: string }>`select count(*) as n from (${items(viewer, window, now)}) i where ${where}`.execute(db);
  return Number(rows[0]!.n);
}
