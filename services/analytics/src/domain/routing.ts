import { type Executor, sql } from '@kn/db';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type Viewer, visibleQuestion } from './access.ts';

type Db = Executor<AnalyticsSchema>;

/** The share of all routings that went to the busiest tenth of the experts (at least one expert). */
export function topDecileShare(loads: number[]): number | null {
  const total = loads.reduce((a, b) => a + b, 0);
  if (!total) return null;
  const sorted = [...loads].sort((a, b) => b - a);
  const top = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 10)));
  return top.reduce((a, b) => a + b, 0) / total;
}

/** Routing of the questions published in [from, to): the decision on publishing, and what the experts did. */
export async function routingReport(db: Db, viewer: Viewer, range: { from: Date; to: Date }) {
  const { rows } = await sql<Record<string, unknown>>`
    with q as (
      select q.id, q.asked_at from questions q
       where q.asked_at >= ${range.from} and q.asked_at < ${range.to} and not q.is_deleted and ${visibleQuestion(viewer)}),
    r as (
      select r.question_id, r.routed_at, r.expert_ids from routings r join q on q.id = r.question_id where r.reason = 'published'),
    answered as (
      select r.question_id, min(s.published_at) - r.routed_at as response
        from r join solutions s on s.question_id = r.question_id
       where s.author_id = any(r.expert_ids) and s.published_at is not null and not s.is_deleted
       group by r.question_id, r.routed_at)
    select (select count(distinct question_id) from r) as routed,
           (select count(*) from r where cardinality(expert_ids) = 0) as without_expert,
           (select avg(cardinality(expert_ids))::float8 from r) as asked_avg,
           (select count(*) from answered) as answered,
           (select percentile_disc(0.5) within group (order by extract(epoch from response)::float8) from answered) as p50,
           (select percentile_disc(0.9) within group (order by extract(epoch from response)::float8) from answered) as p90,
           (select count(*) from forwards f join q on q.id = f.question_id) as forwards,
           (select count(*) from declines d join q on q.id = d.question_id) as declines`.execute(db);
  const loads = (
    await sql<{ user_id: number; asked: string; answered: string }>`
      with q as (
        select q.id from questions q
         where q.asked_at >= ${range.from} and q.asked_at < ${range.to} and not q.is_deleted and ${visibleQuestion(viewer)}),
      asked as (
        select distinct e.user_id, r.question_id
          from routings r join q on q.id = r.question_id cross join lateral unnest(r.expert_ids) as e(user_id))
      select a.user_id, count(*) as asked,
             count(*) filter (where exists (
               select 1 from solutions s
                where s.question_id = a.question_id and s.author_id = a.user_id and s.published_at is not null and not s.is_deleted)) as answered
        from asked a group by a.user_id order by count(*) desc, a.user_id`.execute(db)
  ).rows.map((r) => ({ user_id: r.user_id, asked: Number(r.asked), answered: Number(r.answered) }));
  const r = rows[0]!;
  const n = (v: unknown) => (v === null ? null : Number(v));
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    questions_routed: Number(r.routed),
    without_expert: Number(r.without_expert),
    experts_asked_avg: n(r.asked_avg),
    answered_by_expert: Number(r.answered),
    expert_response_p50_s: n(r.p50),
    expert_response_p90_s: n(r.p90),
    forwards: Number(r.forwards),
    declines: Number(r.declines),
    top_decile_share: topDecileShare(loads.map((l) => l.asked)),
    // Per-person figures are the administrators' only.
    experts: viewer.admin ? loads : null,
  };
}
