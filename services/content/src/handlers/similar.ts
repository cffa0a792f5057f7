import type { Handlers, similarOperations } from '@kn/contracts';
import { similarDomain } from '../domain/similar.ts';
import type { ContentDeps } from './deps.ts';

/** Similar questions and the experts on a question. */
export function similarHandlers(deps: ContentDeps): Handlers<typeof similarOperations> {
  const similar = similarDomain(deps);
  return {
    similarToQuestion: async ({ params, query, actor, requestId }) => similar.toQuestion(params.id, query, actor, requestId),
    similarToText: async ({ query, actor, requestId }) => similar.toText(query.query, query, actor, requestId),
    getQuestionExperts: async ({ params, query, actor, requestId }) => similar.experts(params.id, query.limit, actor, requestId),
  };
}
