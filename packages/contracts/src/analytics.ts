import { z } from 'zod';
import { Id, Limit, Offset, QueryBoolean, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { Solution, ValidityPeriod } from './solutions.ts';

/*
 * Analytics and content health (analytics service, docs/analytics.md): figures built from the
 * domain events alone. Managers see the spaces they may read; per-person figures are for
 * administrators only; a figure over fewer than five people is withheld from everybody else.
 */

/** Who may read the figures: managers and the administrators of content. */
export const ANALYTICS_ROLES = ['manager', 'content_admin', 'super_admin'] as const;
/** Who sees per-person figures, closed spaces they are not in, and groups under the floor. */
export const ANALYTICS_ADMIN_ROLES = ['content_admin', 'super_admin'] as const;
/** A figure over fewer people than this is withheld from non-administrators (it would name them). */
export const ANALYTICS_PEOPLE_FLOOR = 5;

export const Granularities = ['day', 'week', 'month'] as const;
export const Granularity = z.enum(Granularities);
export type Granularity = z.infer<typeof Granularity>;
export const FlowDimensions = ['network', 'tag', 'category', 'knowledge_space', 'department', 'location'] as const;
export const FlowDimension = z.enum(FlowDimensions);
export type FlowDimension = z.infer<typeof FlowDimension>;

const DAY_MS = 86_400_000;
/** The longest range per granularity: a day granularity over more than five years would be thousands of rows. */
export const MAX_RANGE_DAYS: Record<Granularity, number> = { day: 5 * 366, week: 20 * 366, month: 50 * 366 };

const DateParam = z
  .string()
  // Months, days, hours and minutes in their ranges, so a date the pattern admits is one Date.parse reads.
  .regex(
    /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,3})?)?Z)?$/,
    'a date (YYYY-MM-DD) or an ISO 8601 UTC time',
  );

/** A time range with its granularity; `to` is exclusive. Checked together: from before to, and not too long. */
const rangeQuery = {
  from: DateParam.describe('start of the range (inclusive), UTC'),
  to: DateParam.describe('end of the range (exclusive), UTC'),
  granularity: Granularity.default('week').describe('the length of each period: day, week (from Monday) or month'),
};
const checkRange = (q: { from: string; to: string; granularity: Granularity }, ctx: z.RefinementCtx) => {
  const days = (Date.parse(q.to) - Date.parse(q.from)) / DAY_MS;
  if (!(days > 0)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be after from' });
  else if (days > MAX_RANGE_DAYS[q.granularity])
    ctx.addIssue({
      code: 'custom',
      path: ['from'],
      message: `a range of at most ${MAX_RANGE_DAYS[q.granularity]} days at ${q.granularity} granularity (${Math.ceil(days)} asked)`,
    });
};

/** How many groups a breakdown lists: the largest ones. */
const Top = z.coerce.number().int().min(1).max(100).default(20);
const Seconds = z.number().nullable();
const Share = z.number().min(0).max(1).nullable();

export const FlowRow = z
  .object({
    period: z.string().describe('start of the period, YYYY-MM-DD (UTC)'),
    group: z
      .string()
      .nullable()
      .describe('the value of the dimension (tag label, category, space or attribute id/name); null network-wide or unset'),
    people: z.number().int().nullable().describe('distinct askers; null when withheld'),
    suppressed: z.boolean().describe('fewer than five askers: the figures are withheld (null)'),
    asked: z.number().int().nullable().describe('questions published in the period'),
    answered: z.number().int().nullable().describe('of those, with a published solution by now'),
    accepted: z.number().int().nullable().describe('of those, with an accepted solution by now'),
    first_solution_p50_s: Seconds.describe('seconds from publishing to the first solution, median (nearest rank)'),
    first_solution_p90_s: Seconds,
    acceptance_p50_s: Seconds.describe('seconds from publishing to the acceptance, median (nearest rank)'),
    acceptance_p90_s: Seconds,
    answered_within_day: Share.describe('share of the asked questions with a solution within 24 hours'),
    answered_within_week: Share.describe('share of the asked questions with a solution within 7 days'),
  })
  .meta({ id: 'AnalyticsFlowRow' });
export type FlowRow = z.infer<typeof FlowRow>;

export const Backlog = z
  .object({
    unanswered: z.number().int().nullable().describe('published questions without a solution now'),
    age_p50_s: Seconds,
    age_p90_s: Seconds,
    oldest_s: Seconds,
    suppressed: z.boolean(),
  })
  .meta({ id: 'AnalyticsBacklog' });

export const FlowReport = z.object({
  granularity: Granularity,
  dimension: FlowDimension,
  from: Timestamp,
  to: Timestamp,
  as_of: Timestamp.describe('the time the figures are computed for'),
  rows: z.array(FlowRow),
  backlog: Backlog,
});
export type FlowReport = z.infer<typeof FlowReport>;

export const HealthKinds = ['expiring', 'expired', 'validation_requested', 'unaccepted'] as const;
export const HealthKind = z.enum(HealthKinds);
export type HealthKind = z.infer<typeof HealthKind>;

const healthWindow = {
  within_days: z.coerce
    .number()
    .int()
    .min(1)
    .max(366)
    .default(30)
    .describe('expiring: solutions whose validity ends within this many days'),
  after_days: z.coerce.number().int().min(1).max(3660).default(14).describe('unaccepted: questions published at least this many days ago'),
};

export const HealthReport = z.object({
  as_of: Timestamp,
  within_days: z.number().int(),
  after_days: z.number().int(),
  expiring: z.number().int().describe('published solutions whose validity ends within within_days'),
  expired: z.number().int().describe('published solutions whose validity has ended'),
  validation_requested: z.number().int().describe('questions whose validation request no solution has answered yet'),
  unaccepted: z.number().int().describe('questions without an accepted solution after_days after publishing'),
});

export const ReviewItem = z
  .object({
    kind: HealthKind,
    question_id: z.number().int(),
    question_title: z.string(),
    solution_id: z.number().int().nullable(),
    responsible_id: z
      .number()
      .int()
      .nullable()
      .describe('who acts on it: the solution author, or the poser of an unaccepted question (null: the poser is anonymous to the caller)'),
    since: Timestamp.describe('expiring/expired: when the validity ends; validation_requested: the request; unaccepted: publishing'),
  })
  .meta({ id: 'AnalyticsReviewItem' });

export const RoutingReport = z.object({
  from: Timestamp,
  to: Timestamp,
  questions_routed: z.number().int().describe('questions published in the range that routing decided on'),
  without_expert: z.number().int().describe('of those, questions no expert was found for'),
  experts_asked_avg: z.number().nullable().describe('experts asked per routed question'),
  answered_by_expert: z.number().int().describe('routed questions a routed expert published a solution to'),
  expert_response_p50_s: Seconds.describe('seconds from routing to the first solution of a routed expert, median'),
  expert_response_p90_s: Seconds,
  forwards: z.number().int().describe('forwards of questions published in the range'),
  declines: z.number().int().describe('"not me" of routed experts (content.question.declined.v1), once per person and question'),
  top_decile_share: Share.describe('share of all routings that went to the busiest tenth of the experts (concentration)'),
  experts: z
    .array(z.object({ user_id: z.number().int(), asked: z.number().int(), answered: z.number().int() }))
    .nullable()
    .describe('load per expert, busiest first; administrators only (null for others)'),
});

export const GapRow = z
  .object({
    tag: z.string(),
    suppressed: z.boolean().describe('fewer than five askers in the range: the figures are withheld (null)'),
    asked: z.number().int().nullable().describe('questions of the tag published in the range'),
    asked_before: z.number().int().nullable().describe('in the range of the same length just before'),
    answered: z.number().int().nullable().describe('of the questions of the range, those with a solution'),
    answered_before: z.number().int().nullable(),
    experts: z.number().int().nullable().describe('people who published a solution to a question of the tag before the end of the range'),
    growing_faster_than_answers: z.boolean().nullable().describe('more questions than before, and more of them than of answers'),
    single_expert: z.boolean().nullable().describe('one person, or nobody, has answered the tag'),
  })
  .meta({ id: 'AnalyticsGapRow' });

export const ReuseRow = z
  .object({
    period: z.string().describe('start of the period, YYYY-MM-DD (UTC)'),
    views: z.number().int().describe('views of published questions counted in the period (once per person, question and day)'),
    solved_views: z.number().int().describe('of those, views of questions that had a published solution then'),
    solved_questions_viewed: z.number().int().describe('distinct questions behind solved_views'),
    drafts_shown_similar: z
      .number()
      .int()
      .nullable()
      .describe('drafts first shown similar questions in the period; null when withheld (fewer than five authors)'),
    drafts_published: z.number().int().nullable().describe('of those, published since'),
    drafts_not_published: z
      .number()
      .int()
      .nullable()
      .describe('of those, still a draft or deleted: the similar questions may have answered them'),
    suppressed: z.boolean().describe('the draft figures are over fewer than five authors: withheld (null)'),
  })
  .meta({ id: 'AnalyticsReuseRow' });

/** The setting of the weekly digest e-mail (per person, off until they ask for it). */
export const AnalyticsDigestSetting = z
  .object({ weekly_digest: z.boolean().describe('a weekly e-mail with the figures of the week (managers and administrators)') })
  .meta({ id: 'AnalyticsDigestSetting' });

/** What the weekly digest e-mail says: the week's figures as the person may see them. */
export const AnalyticsDigest = z.object({
  week: z.string().describe('the Monday the week starts on, YYYY-MM-DD (UTC)'),
  flow: z.object({
    asked: z.number().int().nullable(),
    answered: z.number().int().nullable(),
    accepted: z.number().int().nullable(),
    first_solution_p50_s: Seconds,
    unanswered: z.number().int().nullable().describe('backlog at the end of the week'),
    suppressed: z.boolean(),
  }),
  health: z.object({
    expiring: z.number().int(),
    expired: z.number().int(),
    validation_requested: z.number().int(),
    unaccepted: z.number().int(),
  }),
  gaps: z
    .array(z.object({ tag: z.string(), asked: z.number().int(), answered: z.number().int(), experts: z.number().int() }))
    .max(5)
    .describe('tags growing faster than their answers, or with a single expert, most asked first'),
});
export type AnalyticsDigest = z.infer<typeof AnalyticsDigest>;

const tag = 'Analytics' as const;
const roles = ANALYTICS_ROLES;

export const analyticsOperations = {
  getAnalyticsFlow: operation({
    service: 'analytics',
    summary: 'Questions asked, answered and accepted per period, with times to solution and the backlog',
    http: { method: 'GET', path: '/analytics/flow', auth: 'user', roles, tag },
    query: z
      .object({
        ...rangeQuery,
        dimension: FlowDimension.default('network').describe('network-wide, or one row per tag, category, space, department or location'),
        value: z
          .string()
          .trim()
          .min(1)
          .max(191)
          .optional()
          .describe('only this value of the dimension (a tag label, a category or space id, an attribute)'),
        top: Top.describe('per dimension: only the groups with the most questions in the range, at most this many'),
      })
      .superRefine(checkRange),
    response: FlowReport,
  }),
  getContentHealth: operation({
    service: 'analytics',
    summary: 'Solutions expiring and expired, validation requests waiting, questions left without an accepted solution',
    http: { method: 'GET', path: '/analytics/health', auth: 'user', roles, tag },
    query: z.object(healthWindow),
    response: HealthReport,
  }),
  listReviewQueue: operation({
    service: 'analytics',
    summary: "The content-health review queue: the caller's own items (every item for managers and administrators)",
    http: { method: 'GET', path: '/analytics/health/queue', auth: 'user', tag },
    query: z.object({
      ...healthWindow,
      kind: HealthKind.optional().describe('only items of this kind'),
      mine: QueryBoolean.default(false).describe('only items the caller is responsible for'),
      limit: Limit(50, 500),
      offset: Offset,
    }),
    response: z.object({ total: z.number().int(), items: z.array(ReviewItem) }),
  }),
  verifySolution: operation({
    service: 'analytics',
    summary: 'Review queue: the solution is still true; validates it for a new period (its author or an administrator)',
    http: {
      method: 'POST',
      path: '/analytics/health/solutions/:id/verify',
      auth: 'user',
      tag,
      answers: { 409: 'the solution is deleted' },
    },
    params: z.object({ id: Id }),
    body: z.object({ validity: ValidityPeriod }),
    response: Solution,
  }),
  markSolutionObsolete: operation({
    service: 'analytics',
    summary: 'Review queue: the solution is no longer true; it is deleted (restorable) (its author or an administrator)',
    http: { method: 'POST', path: '/analytics/health/solutions/:id/obsolete', auth: 'user', status: 204, tag },
    params: z.object({ id: Id }),
  }),
  getRoutingAnalytics: operation({
    service: 'analytics',
    summary: 'How routing went for questions published in a range: experts asked, answers, response times, load',
    http: { method: 'GET', path: '/analytics/routing', auth: 'user', roles, tag },
    query: z.object({ ...rangeQuery }).superRefine(checkRange),
    response: RoutingReport,
  }),
  getAnalyticsGaps: operation({
    service: 'analytics',
    summary: 'Tags where questions grow faster than answers, and tags with one expert, against the range before',
    http: { method: 'GET', path: '/analytics/gaps', auth: 'user', roles, tag },
    query: z
      .object({
        ...rangeQuery,
        top: Top.describe('the tags with the most questions in the range, at most this many'),
      })
      .superRefine(checkRange),
    response: z.object({ from: Timestamp, to: Timestamp, items: z.array(GapRow) }),
  }),
  getAnalyticsReuse: operation({
    service: 'analytics',
    summary: 'Reuse per period: views of solved questions, drafts left unpublished after similar questions were shown',
    http: { method: 'GET', path: '/analytics/reuse', auth: 'user', roles, tag },
    query: z.object({ ...rangeQuery }).superRefine(checkRange),
    response: z.object({ from: Timestamp, to: Timestamp, granularity: Granularity, rows: z.array(ReuseRow) }),
  }),
  getAnalyticsDigestSetting: operation({
    service: 'analytics',
    summary: "The caller's weekly analytics digest e-mail setting (off by default)",
    http: { method: 'GET', path: '/users/me/settings/communication/analytics-digest', auth: 'user', roles, tag: 'User settings' },
    response: AnalyticsDigestSetting,
  }),
  updateAnalyticsDigestSetting: operation({
    service: 'analytics',
    summary: 'Ask for the weekly analytics digest e-mail, or stop it',
    http: { method: 'PUT', path: '/users/me/settings/communication/analytics-digest', auth: 'user', roles, tag: 'User settings' },
    body: AnalyticsDigestSetting,
    response: AnalyticsDigestSetting,
  }),
  rebuildAnalytics: operation({
    service: 'analytics',
    summary: 'Forget every figure and build them again from the event streams (administrators)',
    http: { method: 'POST', path: '/analytics/rebuild', auth: 'user', roles: ['super_admin'], status: 202, tag },
  }),
} as const;
