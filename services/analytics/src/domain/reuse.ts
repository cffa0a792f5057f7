import { ANALYTICS_PEOPLE_FLOOR, type Granularity } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type Viewer, visibleQuestion } from './access.ts';

type Db = Executor<AnalyticsSchema>;

/**
 * Reuse per period of [from, to): views of questions (those with a solution when viewed apart),
 * and drafts first shown similar questions with whether they were published since. A draft left
 * unpublished is the figure a manager looks for: the network may have answered it already.
 */
export async function reuseReport(db: Db, viewer: Viewer, query: { from: Date; to: Date; granularity: Granularity }) {
  const period = (column: string) => sql`to_char(date_trunc(${query.granularity}, ${sql.ref(column)} at time zone 'UTC'), 'YYYY-MM-DD')`;
  const viewed = await sql<{ period: string; views: string; solved_views: string; solved_questions: string }>`
    select ${period('v.day')} as period, sum(v.views) as views, sum(v.solved_views) as solved_views,
           count(distinct v.question_id) filter (where v.solved_views > 0) as solved_questions
      from question_views v join questions q on q.id = v.question_id
     where v.day >= ${query.from}::date and v.day < ${query.to}::date and not q.is_deleted and ${visibleQuestion(viewer)}
     group by 1`.execute(db);
  const drafts = await sql<{ period: string; shown: string; published: string; people: string }>`
    select ${period('q.shown_at')} as period, count(*) as shown, count(p.id) as published, count(distinct q.author_id) as people
      from drafts_shown q left join questions p on p.id = q.question_id and not p.is_deleted
     where q.shown_at >= ${query.from} and q.shown_at < ${query.to} and ${visibleQuestion(viewer)}
     group by 1`.execute(db);
  const periods = [...new Set([...viewed.rows, ...drafts.rows].map((r) => r.period))].sort();
  return {
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    granularity: query.granularity,
    rows: periods.map((p) => {
      const v = viewed.rows.find((r) => r.period === p);
      const d = drafts.rows.find((r) => r.period === p);
      // Drafts name their authors: fewer than five of them are withheld from everybody but administrators.
      const withheld = !!d && !viewer.admin && Number(d.people) < ANALYTICS_PEOPLE_FLOOR;
      const shown = d ? Number(d.shown) : 0;
      const published = d ? Number(d.published) : 0;
      return {
        period: p,
        views: Number(v?.views ?? 0),
        solved_views: Number(v?.solved_views ?? 0),
        solved_questions_viewed: Number(v?.solved_questions ?? 0),
        drafts_shown_similar: withheld ? null : shown,
        drafts_published: withheld ? null : published,
        drafts_not_published: withheld ? null : shown - published,
        suppressed: withheld,
      };
    }),
  };
}
