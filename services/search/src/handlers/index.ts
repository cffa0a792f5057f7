import type { Bus } from '@kn/bus';
import type { Handlers, searchOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { SearchBackend } from '../backend.ts';
import type { SearchConfig } from '../config.ts';
import type { SearchSchema } from '../db/schema.ts';
import { presentExperts, routeQuestion } from '../domain/routing.ts';

export function createHandlers(deps: {
  db: Db<SearchSchema>;
  bus: Bus;
  backend: SearchBackend;
  config: Pick<SearchConfig, 'ROUTING_EXPERTS'>;
}): Handlers<typeof searchOperations> {
  const { db, bus, backend, config } = deps;
  return {
    matchQuestions: async ({ body }) => {
      const result = await backend.match(body);
      if (!body.log) return result;
      const logged = await db
        .insertInto('search_queries')
        .values({ user_id: body.log.user_id, query: body.query, type: body.log.type })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { ...result, search_query_id: logged.id };
    },
    highlightQuestions: async ({ body }) => {
      const highlights = await backend.highlight(body, body.ids);
      return { items: body.ids.map((id, i) => ({ id, highlighting: highlights[i]! })) };
    },
    similarQuestions: async ({ body }) => ({ items: await backend.similar(body, body.limit) }),
    autocompleteQuestions: async ({ query }) => backend.autocomplete(query.query, query.limit),
    suggestTags: async ({ body }) => backend.suggestTags(`${body.title}\n${body.description ?? ''}`, body.limit),
    findExperts: async ({ body, actor, requestId }) => {
      const found = await backend.experts({ text: body.query, limit: body.limit });
      return { tags: found.tags, experts: await presentExperts(bus, actor, found, requestId) };
    },
    expertsForQuestion: async ({ body, actor, requestId }) => {
      const found = await backend.expertsOn(body.question, body.limit);
      return { tags: found.tags, experts: await presentExperts(bus, actor!, found, requestId) };
    },
    routeQuestion: async ({ body }) => db.transaction().execute((tx) => routeQuestion(tx, backend, body, config.ROUTING_EXPERTS)),
    indexStatus: async () => backend.status(),
  };
}
