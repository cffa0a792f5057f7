import { type Handlers, notFound, type similarOperations } from '@kn/contracts';
import { visibleQuestion } from '../domain/access.ts';
import { presentRanked } from '../domain/question-list.ts';
import { tagsOf } from '../domain/question-presenters.ts';
import type { ContentDeps } from './deps.ts';

/** How many similar questions the search service ranks; pages are cut from them. */
const RANKED = 200;

/** Similar questions and the experts on a question: ranked by the search service, shown as the caller may see them. */
export function similarHandlers(deps: ContentDeps): Handlers<typeof similarOperations> {
  const { db, search } = deps;
  return {
    similarToQuestion: async ({ params, query, actor, requestId }) => {
      const row = await visibleQuestion(db, params.id, actor);
      if (!row.is_published || row.is_deleted) throw notFound('question');
      const { items } = await search.similar({ question_id: params.id, limit: RANKED }, actor, requestId);
      return presentRanked(db, actor, items, query);
    },
    similarToText: async ({ query, actor, requestId }) => {
      const { items } = await search.similar({ text: query.query, limit: RANKED }, actor, requestId);
      return presentRanked(db, actor, items, query);
    },
    getQuestionExperts: async ({ params, query, actor, requestId }) => {
      const row = await visibleQuestion(db, params.id, actor);
      if (!row.is_published || row.is_deleted) throw notFound('question');
      const tags = (await tagsOf(db, [row.id])).get(row.id) ?? [];
      const { experts } = await search.experts(
        {
          question: {
            id: row.id,
            title: row.title,
            text: row.description_text,
            tags: tags.map((t) => t.label),
            language: row.language,
            author_id: row.author_id,
            knowledge_space_id: row.knowledge_space_id,
          },
          limit: query.limit,
        },
        actor,
        requestId,
      );
      return { total: experts.length, items: experts };
    },
  };
}
