import type { EventEnvelope, EventSolution, EventSubject, QuestionSnapshot } from '@kn/contracts';
import type { IndexedQuestion, SearchStore } from './store.ts';

export type IndexHandler<S extends EventSubject> = (store: SearchStore, event: EventEnvelope<S>) => void;
export type IndexHandlers = { [S in EventSubject]?: IndexHandler<S> };

const fromSnapshot = (q: QuestionSnapshot): IndexedQuestion => ({
  id: q.id,
  author_id: q.author_id,
  language: q.language,
  title: q.title,
  description: q.description_text,
  tags: q.tags.map((t) => t.label),
  category_id: q.category?.id ?? null,
  knowledge_space_id: q.knowledge_space?.id ?? null,
  is_published: q.is_published,
  is_deleted: q.is_deleted,
  published: q.published,
});

const question = (store: SearchStore, q: QuestionSnapshot) => {
  store.upsertQuestion(fromSnapshot(q));
  if (q.knowledge_space) store.setSpace(q.knowledge_space.id, q.knowledge_space.is_closed);
};

/** Drafts and deleted solutions are not searchable: only published, live solutions are. */
const solution = (store: SearchStore, s: EventSolution) =>
  store.setPart('solution', s.id, s.question_id, s.author_id, s.is_published && !s.is_deleted ? s.text : null);

/** How each content event changes the question index. */
export const questionIndexHandlers: IndexHandlers = {
  'content.question.created.v1': (store, e) => question(store, e.data.question),
  'content.question.updated.v1': (store, e) => question(store, e.data.question),
  'content.question.published.v1': (store, e) => question(store, e.data.question),
  'content.question.deleted.v1': (store, e) => question(store, e.data.question),
  'content.question.restored.v1': (store, e) => question(store, e.data.question),
  'content.question.flagged.v1': (store, e) => question(store, e.data.question),
  'content.question.imported.v1': (store, e) => {
    question(store, e.data.question);
    for (const s of e.data.solutions) solution(store, s);
    for (const c of e.data.comments) store.setPart('comment', c.id, c.question_id, c.author_id, c.is_deleted ? null : c.text);
  },
  'content.solution.created.v1': (store, e) => solution(store, e.data.solution),
  'content.solution.updated.v1': (store, e) => solution(store, e.data.solution),
  'content.solution.published.v1': (store, e) => solution(store, e.data.solution),
  'content.solution.deleted.v1': (store, e) => solution(store, e.data.solution),
  'content.solution.restored.v1': (store, e) => solution(store, e.data.solution),
  'content.comment.created.v1': (store, e) =>
    store.setPart('comment', e.data.comment.id, e.data.comment.question_id, e.data.comment.author_id, e.data.comment.text),
  'content.comment.updated.v1': (store, e) =>
    store.setPart(
      'comment',
      e.data.comment.id,
      e.data.comment.question_id,
      e.data.comment.author_id,
      e.data.comment.is_deleted ? null : e.data.comment.text,
    ),
  'content.comment.deleted.v1': (store, e) =>
    store.setPart('comment', e.data.comment.id, e.data.comment.question_id, e.data.comment.author_id, null),
  'content.comment.converted.v1': (store, e) => {
    store.setPart('comment', e.data.comment.id, e.data.comment.question_id, e.data.comment.author_id, null);
    solution(store, e.data.solution);
  },
  'content.attachment.added.v1': (store, e) =>
    store.setPart('attachment', e.data.attachment.id, e.data.attachment.question_id, e.data.attachment.uploader_id, e.data.text),
  'content.attachment.deleted.v1': (store, e) =>
    store.setPart('attachment', e.data.attachment.id, e.data.attachment.question_id, e.data.attachment.uploader_id, null),
  'content.category.deleted.v1': (store, e) => store.clearCategory(e.data.question_ids),
  'content.tag.created.v1': (store, e) =>
    store.setTag(e.data.tag.label, { excluded_from_suggestions: e.data.tag.excluded_from_suggestions }),
  'content.tag.updated.v1': (store, e) =>
    store.setTag(e.data.tag.label, { excluded_from_suggestions: e.data.tag.excluded_from_suggestions }),
  'content.tag.links-updated.v1': (store, e) => store.setTag(e.data.tag.label, { links: e.data.links }),
  'content.knowledge-space.created.v1': (store, e) => store.setSpace(e.data.knowledge_space.id, e.data.knowledge_space.is_closed),
  'content.knowledge-space.updated.v1': (store, e) => store.setSpace(e.data.knowledge_space.id, e.data.knowledge_space.is_closed),
};
