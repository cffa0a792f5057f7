import { type Bus, call } from '@kn/bus';
import { type Actor, type analyticsOperations, type Handlers, solutionsOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Clock } from '@kn/service';
import type { AnalyticsSchema } from '../db/schema.ts';
import { viewer } from '../domain/access.ts';
import { answerCache } from '../domain/answers.ts';
import { setDigest, wantsDigest } from '../domain/digest.ts';
import { flowReport } from '../domain/flow.ts';
import { gapsReport } from '../domain/gaps.ts';
import { healthReport, reviewQueue } from '../domain/health.ts';
import { reuseReport } from '../domain/reuse.ts';
import { routingReport } from '../domain/routing.ts';
import type { AnalyticsFeed } from '../jobs/feed.ts';

export function createHandlers(deps: {
  db: Db<AnalyticsSchema>;
  bus: Bus;
  clock: Clock;
  feed: AnalyticsFeed;
  cacheMs: number;
}): Handlers<typeof analyticsOperations> {
  const { db, bus, clock, feed } = deps;
  const cached = answerCache({ ttlMs: deps.cacheMs, maxEntries: 1000 });
  /** The same question by the same caller (what they may see depends on who they are). */
  const key = (operation: string, actor: Actor, query: unknown) => `${operation} ${actor.id} ${JSON.stringify(query)}`;
  const range = (query: { from: string; to: string }) => ({ from: new Date(query.from), to: new Date(query.to) });
  return {
    getAnalyticsFlow: async ({ actor, query }) =>
      cached(key('flow', actor, query), () => flowReport(db, viewer(actor), { ...query, ...range(query) }, clock.now())),
    getContentHealth: async ({ actor, query }) =>
      cached(key('health', actor, query), () => healthReport(db, viewer(actor), query, clock.now())),
    listReviewQueue: async ({ actor, query }) =>
      cached(key('queue', actor, query), () => reviewQueue(db, viewer(actor), query, clock.now())),
    getRoutingAnalytics: async ({ actor, query }) =>
      cached(key('routing', actor, query), () => routingReport(db, viewer(actor), range(query))),
    getAnalyticsGaps: async ({ actor, query }) =>
      cached(key('gaps', actor, query), () => gapsReport(db, viewer(actor), { ...range(query), top: query.top })),
    // The content service decides who may: the solution's author or an administrator.
    verifySolution: async ({ actor, params, body, requestId, url }) =>
      call(bus, 'validateSolution', solutionsOperations.validateSolution, { actor, params, body, query: undefined, requestId, url }),
    // Obsolete is a soft deletion (an administrator can restore it): the solution leaves every list and the queue.
    markSolutionObsolete: async ({ actor, params, requestId, url }) => {
      await call(bus, 'deleteSolution', solutionsOperations.deleteSolution, {
        actor,
        params,
        body: undefined,
        query: undefined,
        requestId,
        url,
      });
      return undefined;
    },
    getAnalyticsReuse: async ({ actor, query }) =>
      cached(key('reuse', actor, query), () => reuseReport(db, viewer(actor), { ...range(query), granularity: query.granularity })),
    getAnalyticsDigestSetting: async ({ actor }) => ({ weekly_digest: await wantsDigest(db, actor.id) }),
    updateAnalyticsDigestSetting: async ({ actor, body }) => {
      await setDigest(db, actor.id, body.weekly_digest);
      return { weekly_digest: body.weekly_digest };
    },
    rebuildAnalytics: async () => {
      await feed.rebuild();
      return undefined;
    },
  };
}
