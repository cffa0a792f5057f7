import {
  EventEnvelope,
  type EventSolution,
  type EventSubject,
  events,
  type NetworkSettings,
  type QuestionSnapshot,
  type StreamSubject,
} from '@kn/contracts';
import type { SolutionFacts } from '../domain/expertise.ts';
import type { PartKind } from './words.ts';

/** A question as an index keeps it: the fields of its latest event that search reads. */
export interface IndexedQuestion {
  id: number;
  author_id: number;
  language: string;
  title: string;
  description: string;
  tags: string[];
  category_id: number | null;
  knowledge_space_id: number | null;
  is_published: boolean;
  is_deleted: boolean;
  published: string | null;
}

/**
 * The changes an event makes to a search index, whatever keeps it: the local store
 * (local/store.ts) writes them to its SQLite file, the Elasticsearch feed (elasticsearch/feed.ts)
 * to documents. Both engines decode and interpret the events here, so they cannot drift apart.
 */
export interface IndexWriter {
  /** Stores a question as the latest event shows it. */
  upsertQuestion(q: IndexedQuestion): void;
  /** A solution's, comment's or attachment's searchable text; null: not searchable (any more). */
  setPart(kind: PartKind, id: number, questionId: number, authorId: number, text: string | null): void;
  /** A solution's facts for expertise (its text is a part), as they stand from `at` (ms) on. */
  setSolution(s: EventSolutionFacts, at: number): void;
  /** A question was forwarded to a user at `at` (ms): a recommendation of them for its tags. */
  addForward(questionId: number, recipientId: number, at: number): void;
  /** Questions whose category was deleted: uncategorized now. */
  clearCategory(questionIds: readonly number[]): void;
  setTag(label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] }): void;
  /** A knowledge space: whether it is closed, and (when the event says) its members. */
  setSpace(id: number, isClosed: boolean, members?: readonly number[]): void;
  setUserDeleted(userId: number, deleted: boolean): void;
  /** A system user (an importer's placeholder author, a bot) is never an expert; their content still counts. */
  setUserSystem(userId: number, system: boolean): void;
  /** The network settings expert search and routing follow. */
  setExpertSettings(settings: ExpertSettings): void;
}

/** The network settings the search service follows. */
export type ExpertSettings = Pick<NetworkSettings, 'min_experts' | 'routings_per_expert_per_week'>;

/** A solution's facts as an event tells them (times as ISO strings). */
export type EventSolutionFacts = Omit<SolutionFacts, 'time' | 'accepted_at'> & { time: string; accepted_at: string | null };

export type IndexHandler<S extends EventSubject> = (store: IndexWriter, event: EventEnvelope<S>) => void;
/** The streams an index reads. */
export const indexedStreams = ['content', 'users'] as const;
type IndexedSubject = StreamSubject<(typeof indexedStreams)[number]>;
/** Events of those streams that change nothing in an index: every other one has its handler (the compiler checks). */
export const notIndexed = [
  'content.category.created.v1',
  'content.category.updated.v1',
  'content.question.followed.v1',
  'content.question.unfollowed.v1',
  'content.question.shared.v1',
  'content.question.declined.v1',
  'content.question.views-counted.v1',
  'content.question.similar-shown.v1',
  'content.question.validation-requested.v1',
  'content.solution.shared.v1',
  'content.solution.validated.v1',
  'content.solution.expired.v1',
  'users.settings.updated.v1',
] as const satisfies readonly IndexedSubject[];
export type IndexHandlers = { [S in Exclude<IndexedSubject, (typeof notIndexed)[number]>]: IndexHandler<S> };

/** The handler of a subject, if the index follows it. */
export const handlerOf = (handlers: IndexHandlers, subject: EventSubject) =>
  (handlers as Partial<Record<EventSubject, IndexHandler<EventSubject>>>)[subject];

/**
 * Applies one stream message (its JSON) to an index; events the index does not follow change
 * nothing. Throws when the message is not an event of the catalogue.
 */
export function applyEvent(handlers: IndexHandlers, writer: IndexWriter, json: unknown) {
  const parsed = EventEnvelope.safeParse(json);
  if (!parsed.success) throw new Error('not an event envelope');
  const envelope = parsed.data as EventEnvelope;
  const handler = handlerOf(handlers, envelope.subject as EventSubject);
  if (!handler) return;
  const payload = events[envelope.subject as EventSubject].safeParse(envelope.data);
  if (!payload.success) throw new Error(`payload of ${envelope.subject} does not match the catalogue`);
  handler(writer, { ...envelope, data: payload.data } as EventEnvelope);
}

export const fromSnapshot = (q: QuestionSnapshot): IndexedQuestion => ({
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

const question = (store: IndexWriter, q: QuestionSnapshot) => {
  store.upsertQuestion(fromSnapshot(q));
  if (q.knowledge_space) store.setSpace(q.knowledge_space.id, q.knowledge_space.is_closed);
};

/**
 * A solution's text (drafts and deleted solutions are not searchable) and its facts for expertise
 * (ratings, acceptance and upvotes change without the text changing), as they stand from the
 * event's time on.
 */
const solution = (store: IndexWriter, s: EventSolution, at: string) => {
  const live = s.is_published && !s.is_deleted;
  store.setPart('solution', s.id, s.question_id, s.author_id, live ? s.text : null);
  store.setSolution(
    {
      id: s.id,
      question_id: s.question_id,
      author_id: s.author_id,
      live,
      time: s.published ?? s.created,
      rating: s.rating,
      rating_count: s.rating_count,
      upvotes: s.upvote_count,
      accepted_at: s.accepted_by_question_poser,
    },
    Date.parse(at),
  );
};

/** Who can be an expert: not a deleted or deactivated user, not a system user. */
const user = (store: IndexWriter, u: { id: number; is_deleted: boolean; is_active?: boolean; is_system: boolean }) => {
  store.setUserDeleted(u.id, u.is_deleted || u.is_active === false);
  store.setUserSystem(u.id, u.is_system);
};

const space = (store: IndexWriter, s: { id: number; is_closed: boolean; member_ids: number[] }) =>
  store.setSpace(s.id, s.is_closed, s.member_ids);

/** How each event changes the index. */
export const indexHandlers: IndexHandlers = {
  'content.question.created.v1': (store, e) => question(store, e.data.question),
  'content.question.updated.v1': (store, e) => question(store, e.data.question),
  'content.question.published.v1': (store, e) => question(store, e.data.question),
  'content.question.deleted.v1': (store, e) => question(store, e.data.question),
  'content.question.restored.v1': (store, e) => question(store, e.data.question),
  'content.question.flagged.v1': (store, e) => question(store, e.data.question),
  'content.question.imported.v1': (store, e) => {
    question(store, e.data.question);
    // An import brings the past: each solution stands as it is from its own time on.
    for (const s of e.data.solutions) solution(store, s, s.published ?? s.created);
    for (const c of e.data.comments) store.setPart('comment', c.id, c.question_id, c.author_id, c.is_deleted ? null : c.text);
  },
  'content.solution.created.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.updated.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.published.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.deleted.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.restored.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.rated.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.accepted.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.upvoted.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.solution.upvote-removed.v1': (store, e) => solution(store, e.data.solution, e.occurred_at),
  'content.question.forwarded.v1': (store, e) => store.addForward(e.data.question.id, e.data.recipient_id, Date.parse(e.occurred_at)),
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
    solution(store, e.data.solution, e.occurred_at);
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
  'content.knowledge-space.created.v1': (store, e) => space(store, e.data.knowledge_space),
  'content.knowledge-space.updated.v1': (store, e) => space(store, e.data.knowledge_space),
  'users.user.created.v1': (store, e) => user(store, e.data.user),
  'users.user.updated.v1': (store, e) => user(store, e.data.user),
  'users.user.deleted.v1': (store, e) => store.setUserDeleted(e.data.user_id, true),
  'users.network-settings.updated.v1': (store, e) =>
    store.setExpertSettings({
      min_experts: e.data.settings.min_experts,
      routings_per_expert_per_week: e.data.settings.routings_per_expert_per_week,
    }),
};
