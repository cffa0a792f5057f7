import { writeEvent } from '@kn/bus';
import { type Actor, notFound } from '@kn/contracts';
import type { QuestionRow } from '../db/questions-tables.ts';
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

  /** Once per draft: the first similar questions it was shown, for the reuse figures. */
  async function recordShown(draft: QuestionRow, shown: Array<{ id: number }>) {
    await db.transaction().execute(async (tx) => {
      const first = await tx
        .insertInto('draft_similar_shown')
        .values({ question_id: draft.id, shown_at: new Date() })
        .onConflict((c) => c.doNothing())
        .returning('question_id')
        .executeTakeFirst();
      if (!first) return;
      const question = { id: draft.id, author_id: draft.author_id, knowledge_space_id: draft.knowledge_space_id };
      const similar = shown.slice(0, 100).map((q) => q.id);
      await writeEvent(tx, 'content.question.similar-shown.v1', { question, similar }, { actorId: draft.author_id });
    });
  }

  return {
    async toQuestion(id: number, page: Page, actor: Actor, requestId: string) {
      await publishedQuestion(id, actor);
      const { items } = await search.similar({ question_id: id, limit: RANKED }, actor, requestId);
      return lists.ranked(actor, items, page);
    },

    /** `draft`: the caller's question being written; the first answer with results for it is recorded. */
    async toText(text: string, page: Page & { draft?: number }, actor: Actor, requestId: string) {
      const draft = page.draft === undefined ? null : await visibleQuestion(db, page.draft, actor);
      if (draft && draft.author_id !== actor.id) throw notFound('draft');
      const { items } = await search.similar({ text, limit: RANKED }, actor, requestId);
      const answer = await lists.ranked(actor, items, page);
      if (draft && !draft.is_published && !draft.is_deleted && answer.items.length) await recordShown(draft, answer.items);
      return answer;
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
