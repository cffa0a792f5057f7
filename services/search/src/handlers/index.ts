import type { Handlers, searchOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { SearchSchema } from '../db/schema.ts';
import { highlight } from '../domain/highlight.ts';
import { matchQuestions } from '../domain/match.ts';
import { similarTo } from '../domain/similarity.ts';
import { autocomplete, suggestTags } from '../domain/suggest.ts';
import type { SearchIndex } from '../index/search-index.ts';

export function createHandlers(deps: { db: Db<SearchSchema>; index: SearchIndex }): Handlers<typeof searchOperations> {
  const { db, index } = deps;
  return {
    matchQuestions: async ({ body }) => {
      const store = index.store();
      const result = matchQuestions(store, body);
      const highlights = body.highlight
        ? highlight(
            store,
            result.items.map((i) => i.id),
            body,
          )
        : null;
      const items = result.items.map((item, i) => (highlights ? { ...item, highlighting: highlights[i] } : item));
      if (!body.log) return { ...result, items };
      const logged = await db
        .insertInto('search_queries')
        .values({ user_id: body.log.user_id, query: body.query, type: body.log.type })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { ...result, items, search_query_id: logged.id };
    },
    highlightQuestions: async ({ body }) => {
      const highlights = highlight(index.store(), body.ids, body);
      return { items: body.ids.map((id, i) => ({ id, highlighting: highlights[i]! })) };
    },
    similarQuestions: async ({ body }) => ({ items: similarTo(index.store(), body, body.limit) }),
    autocompleteQuestions: async ({ query }) => autocomplete(index.store(), query.query, query.limit),
    suggestTags: async ({ body }) => suggestTags(index.store(), `${body.title}\n${body.description ?? ''}`, body.limit),
    indexStatus: async () => index.status(),
  };
}
