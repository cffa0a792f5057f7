import { ANALYTICS_PEOPLE_FLOOR, type FlowDimension, type FlowReport, type FlowRow, type Granularity } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { RawBuilder } from 'kysely';
import type { AnalyticsSchema } from '../db/schema.ts';
import { type Viewer, visibleQuestion } from './access.ts';

type Db = Executor<AnalyticsSchema>;

/**
 * The group of a question under each dimension, with what it needs joined. Tags read
 * `question_tags` (a question once per tag, so it counts under each), whose index gives the rows of
 * the top tags alone; the rest read `questions`. Either is `q` with the columns the figures use.
 */
const dimensions: Record<
  FlowDimension,
  {
    table?: RawBuilder<unknown>;
    from: RawBuilder<unknown>;
    group: RawBuilder<string | null>;
    matches: (v: string) => RawBuilder<boolean>;
  }
> = {
  network: { from: sql``, group: sql`null::text`, matches: () => sql`true` },
  tag: {
    table: sql`question_tags`,
    from: sql``,
    group: sql`q.label`,
    matches: (v) => sql`lower(q.label) = lower(${v})`,
  },
  category: {
    from: sql``,
    group: sql`q.category_name`,
    matches: (v) => sql`(q.category_id::text = ${v} or lower(q.category_name) = lower(${v}))`,
  },
  knowledge_space: {
    from: sql`left join spaces sp on sp.id = q.knowledge_space_id`,
    group: sql`sp.name`,
    matches: (v) => sql`(q.knowledge_space_id::text = ${v} or lower(sp.name) = lower(${v}))`,
  },
  department: {
    from: sql`left join people pe on pe.id = q.author_id`,
    group: sql`pe.department`,
    matches: (v) => sql`lower(pe.department) = lower(${v})`,
  },
  location: {
    from: sql`left join people pe on pe.id = q.author_id`,
    group: sql`pe.location`,
    matches: (v) => sql`lower(pe.location) = lower(${v})`,
  },
};

const seconds = (from: RawBuilder<unknown>, to: RawBuilder<unknown>) => sql`extract(epoch from (${to} - ${from}))::float8`;
/** Nearest-rank percentile (a value that occurred), of a duration in seconds. */
const percentile = (p: number, value: RawBuilder<unknown>) =>
  sql<number | null>`percentile_disc(${p}::float8) within group (order by ${value})`;

interface FlowQuery {
  from: Date;
  to: Date;
  granularity: Granularity;
  dimension: FlowDimension;
  value?: string;
  top: number;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** Questions published in the range, per period and group, with how they were answered by `now`; and the backlog now. */
export async function flowReport(db: Db, viewer: Viewer, query: FlowQuery, now: Date): Promise<FlowReport> {
  const dim = dimensions[query.dimension];
  const table = dim.table ?? sql`questions`;
  // Tags are never null: the top tags' rows come by index; other groups may be null.
  const inTop = dim.table
    ? sql`q.label = any(array(select grp from top))`
    : sql`exists (select 1 from top where top.grp is not distinct from ${dim.group})`;
  const where = sql.join([visibleQuestion(viewer), sql`not q.is_deleted`, query.value ? dim.matches(query.value) : sql`true`], sql` and `);
  const toFirst = seconds(sql`q.asked_at`, sql`q.first_solution_at`);
  const toAccept = seconds(sql`q.asked_at`, sql`q.accepted_at`);
  // Per dimension only the groups with the most questions in the range: a dashboard shows a few,
  // and an answer of every tag by every day would be larger than a message.
  const { rows } = await sql<Record<string, unknown>>`
    with top as (
      select ${dim.group} as grp from ${table} q ${dim.from}
       where q.asked_at >= ${query.from} and q.asked_at < ${query.to} and ${where}
       group by 1 order by count(*) desc, 1 nulls first limit ${query.top})
    select to_char(date_trunc(${query.granularity}, q.asked_at at time zone 'UTC'), 'YYYY-MM-DD') as period,
           ${dim.group} as grp,
           count(distinct q.author_id) as people,
           count(*) as asked,
           count(q.first_solution_at) as answered,
           count(q.accepted_at) as accepted,
           ${percentile(0.5, toFirst)} as first_p50, ${percentile(0.9, toFirst)} as first_p90,
           ${percentile(0.5, toAccept)} as accept_p50, ${percentile(0.9, toAccept)} as accept_p90,
           count(*) filter (where q.first_solution_at <= q.asked_at + interval '1 day') as within_day,
           count(*) filter (where q.first_solution_at <= q.asked_at + interval '7 days') as within_week
      from ${table} q ${dim.from}
     where q.asked_at >= ${query.from} and q.asked_at < ${query.to} and ${where} and ${inTop}
     group by 1, 2
     order by 1, 2 nulls first`.execute(db);
  const withheld = (people: number) => !viewer.admin && people < ANALYTICS_PEOPLE_FLOOR;
  const flowRows: FlowRow[] = rows.map((r) => {
    const people = Number(r.people);
    const asked = Number(r.asked);
    const base = { period: String(r.period), group: (r.grp as string | null) ?? null };
    if (withheld(people)) return { ...base, ...EMPTY_ROW };
    return {
      ...base,
      people,
      suppressed: false,
      asked,
      answered: Number(r.answered),
      accepted: Number(r.accepted),
      first_solution_p50_s: num(r.first_p50),
      first_solution_p90_s: num(r.first_p90),
      acceptance_p50_s: num(r.accept_p50),
      acceptance_p90_s: num(r.accept_p90),
      answered_within_day: Number(r.within_day) / asked,
      answered_within_week: Number(r.within_week) / asked,
    };
  });
  // Each question once, however many of its tags match.
  const age = seconds(sql`b.asked_at`, sql`${now}::timestamptz`);
  const backlogRow = (
    await sql<Record<string, unknown>>`
      with b as (
        select distinct q.id, q.author_id, q.asked_at
          from ${table} q ${dim.from}
         where q.first_solution_at is null and q.asked_at <= ${now} and ${where})
      select count(distinct b.author_id) as people, count(*) as unanswered,
             ${percentile(0.5, age)} as p50, ${percentile(0.9, age)} as p90, max(${age}) as oldest
        from b`.execute(db)
  ).rows[0]!;
  const backlog = withheld(Number(backlogRow.people))
    ? { unanswered: null, age_p50_s: null, age_p90_s: null, oldest_s: null, suppressed: true }
    : {
        unanswered: Number(backlogRow.unanswered),
        age_p50_s: num(backlogRow.p50),
        age_p90_s: num(backlogRow.p90),
        oldest_s: num(backlogRow.oldest),
        suppressed: false,
      };
  return {
    granularity: query.granularity,
    dimension: query.dimension,
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    as_of: now.toISOString(),
    rows: flowRows,
    backlog,
  };
}

const EMPTY_ROW = {
  people: null,
  suppressed: true,
  asked: null,
  answered: null,
  accepted: null,
  first_solution_p50_s: null,
  first_solution_p90_s: null,
  acceptance_p50_s: null,
  acceptance_p90_s: null,
  answered_within_day: null,
  answered_within_week: null,
} as const;
