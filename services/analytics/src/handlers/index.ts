import { type Bus, call } from '@kn/bus';
import { type analyticsOperations, type Handlers, solutionsOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Clock } from '@kn/service';
import type { AnalyticsSchema } from '../db/schema.ts';
import { viewer } from '../domain/access.ts';
import { flowReport } from '../domain/flow.ts';
import { healthReport, reviewQueue } from '../domain/health.ts';
import { routingReport } from '../domain/routing.ts';
import type { AnalyticsFeed } from '../jobs/feed.ts';

export function createHandlers(deps: {
  db: Db<AnalyticsSchema>;
  bus: Bus;
  clock: Clock;
  feed: AnalyticsFeed;
}): Handlers<typeof analyticsOperations> {
  const { db, bus, clock, feed } = deps;
  return {
    getAnalyticsFlow: async ({ actor, query }) =>
      flowReport(db, viewer(actor), { ...query, from: new Date(query.from), to: new Date(query.to) }, clock.now()),
    getContentHealth: async ({ actor, query }) => healthReport(db, viewer(actor), query, clock.now()),
    listReviewQueue: async ({ actor, query }) => reviewQueue(db, viewer(actor), query, clock.now()),
    getRoutingAnalytics: async ({ actor, query }) =>
      routingReport(db, viewer(actor), { from: new Date(query.from), to: new Date(query.to) }),
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
    rebuildAnalytics: async () => {
      await feed.rebuild();
      return undefined;
    },
  };
}
