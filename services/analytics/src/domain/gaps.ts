import { ANALYTICS_PEOPLE_FLOOR } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type Viewer, visibleQuestion } from './access.ts';

type Db = Executor<AnalyticsSchema>;

/**
 * Per tag (the `top` with the most questions in [from, to)): questions and answers against the
 * range of the same length before, and how many people have ever answered it by `to`.
 */
export async function gapsReport(db: Db, viewer: Viewer, range: { from: Date; to: Date; top: number }) {
  const before = new Date(range.from.getTime() - (range.to.getTime() - range.from.getTime()));
  const tagged = (from: Date, to: Date) => sql`
    select t.label, count(*) as asked, count(q.first_solution_at) as answered, count(distinct q.author_id) as people
      from questions q cross join lateral unnest(q.tags) as t(label)
     where q.asked_at >= ${from} and q.asked_at < ${to} and not q.is_deleted and ${visibleQuestion(viewer)}
     group by t.label`;
  const { rows } = await sql<{
    label: string;
    asked: string;
    answered: string;
    people: string;
    asked_before: string;
    answered_before: string;
    experts: string;
  }>`
    with now as (${tagged(range.from, range.to)} order by count(*) desc, t.label limit ${range.top}),
    earlier as (${tagged(before, range.from)}),
    experts as (
      select now.label, count(distinct s.author_id) as n
        from now join questions q on q.tags @> array[now.label]::text[] join solutions s on s.question_id = q.id
       where s.published_at < ${range.to} and not s.is_deleted and not q.is_deleted and ${visibleQuestion(viewer)}
       group by now.label)
    select now.label, now.asked, now.answered, now.people,
           coalesce(earlier.asked, 0) as asked_before, coalesce(earlier.answered, 0) as answered_before, coalesce(experts.n, 0) as experts
      from now left join earlier using (label) left join experts using (label)
     order by now.asked desc, now.label`.execute(db);
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    items: rows.map((r) => {
      const [asked, answered, askedBefore, answeredBefore, experts] = [
        r.asked,
        r.answered,
        r.asked_before,
        r.answered_before,
        r.experts,
      ].map(Number) as [number, number, number, number, number];
      if (!viewer.admin && Number(r.people) < ANALYTICS_PEOPLE_FLOOR)
        return {
          tag: r.label,
          suppressed: true,
          asked: null,
          asked_before: null,
          answered: null,
          answered_before: null,
          experts: null,
          growing_faster_than_answers: null,
          single_expert: null,
        };
      return {
        tag: r.label,
        suppressed: false,
        asked,
        asked_before: askedBefore,
        answered,
        answered_before: answeredBefore,
        experts,
        growing_faster_than_answers: asked > askedBefore && asked - askedBefore > answered - answeredBefore,
        single_expert: experts <= 1,
      };
    }),
  };
}
