import { type Actor, notFound } from '@kn/contracts';
import type { ContentDeps } from '../handlers/deps.ts';
import { visibleQuestion } from './access.ts';
import { questionListDomain } from './question-list.ts';
import { tagsOf } from './question-presenters.ts';

/** How many similar questions the search service ranks; pages are cut from them. */
const RANKED = 200;

type Page = { limit: number; offset: number };

/** Similar questions and the experts on a question: ranked by the search service, shown as the caller may see them. */
export function similarDomain(deps: ContentDeps) {
  const { db, search } = deps;
  const lists = questionListDomain(deps);

  /** A published, live question the caller may see; 404 otherwise. */
  async function publishedQuestion(id: number, actor: Actor) {
    const row = await visibleQuestion(db, id, actor);
    if (!row.is_published || row.is_deleted) throw notFound('question');
    return row;
  }

  return {
    async toQuestion(id: number, page: Page, actor: Actor, requestId: string) {
      await publishedQuestion(id, actor);
      const { items } = await search.similar({ question_id: id, limit: RANKED }, actor, requestId);
      return lists.ranked(actor, items, page);
    },

    async toText(text: string, page: Page, actor: Actor, requestId: string) {
      const { items } = await search.similar({ text, limit: RANKED }, actor, requestId);
      return lists.ranked(actor, items, page);
    },

    async experts(id: number, limit: number, actor: Actor, requestId: string) {
      const row = await publishedQuestion(id, actor);
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
          limit,
        },
        actor,
        requestId,
      );
      return { total: experts.length, items: experts };
    },
  };
}
