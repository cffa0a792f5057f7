import { type Handlers, notFound, type similarOperations } from '@kn/contracts';
import { presentRanked } from '../domain/question-list.ts';
import { findVisibleQuestion } from '../domain/questions.ts';
import type { ContentDeps } from './deps.ts';

/** How many similar questions the search service ranks; pages are cut from them. */
const RANKED = 200;

export function similarHandlers(deps: ContentDeps): Handlers<typeof similarOperations> {
  const { db, search } = deps;
  return {
    similarToQuestion: async ({ params, query, actor, requestId }) => {
      const row = await findVisibleQuestion(db, params.id, actor);
      if (!row.is_published || row.is_deleted) throw notFound('question');
      const { items } = await search.similar({ question_id: params.id, limit: RANKED }, actor, requestId);
      return presentRanked(db, actor, items, query);
    },
    similarToText: async ({ query, actor, requestId }) => {
      const { items } = await search.similar({ text: query.query, limit: RANKED }, actor, requestId);
      return presentRanked(db, actor, items, query);
    },
  };
}
