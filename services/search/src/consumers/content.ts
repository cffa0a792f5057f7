import { type Bus, type Consumer, type EventHandlers, startConsumer } from '@kn/bus';
import type { Db, Tx } from '@kn/db';
import type { SearchBackend } from '../backend.ts';
import type { SearchSchema } from '../db/schema.ts';
import type { ExpertSearch } from '../domain/expert-search.ts';
import { markAnswered, routeQuestion } from '../domain/routing.ts';

/** Content events that route nothing (the index follows them on its own: local/events.ts). */
const ignored = [
  'content.question.created.v1',
  'content.question.updated.v1',
  'content.question.deleted.v1',
  'content.question.restored.v1',
  'content.question.flagged.v1',
  'content.question.followed.v1',
  'content.question.unfollowed.v1',
  'content.question.imported.v1',
  'content.question.forwarded.v1',
  'content.question.shared.v1',
  'content.category.created.v1',
  'content.category.updated.v1',
  'content.category.deleted.v1',
  'content.tag.created.v1',
  'content.tag.updated.v1',
  'content.tag.links-updated.v1',
  'content.knowledge-space.created.v1',
  'content.knowledge-space.updated.v1',
  'content.solution.created.v1',
  'content.solution.updated.v1',
  'content.solution.deleted.v1',
  'content.solution.restored.v1',
  'content.solution.rated.v1',
  'content.solution.accepted.v1',
  'content.solution.upvoted.v1',
  'content.solution.upvote-removed.v1',
  'content.solution.validated.v1',
  'content.solution.expired.v1',
  'content.solution.shared.v1',
  'content.comment.created.v1',
  'content.comment.updated.v1',
  'content.comment.deleted.v1',
  'content.comment.converted.v1',
  'content.attachment.added.v1',
  'content.attachment.deleted.v1',
] as const;

/**
 * Routes every published question and validation request: the safety net behind the content
 * service's call at publishing, and the only path for validation requests. Two durable consumers,
 * shared by the instances, each delivered only its subjects (NATS 2.9 has one filter a consumer):
 * `search-routing` the published questions and solutions (`content.*.published.v1`, in the
 * order they were published), `search-validation` the validation requests. The other content
 * events, a bulk import's million among them, never reach them. Until this instance's index has
 * caught up an event is retried (SearchIndexLoading); events older than `maxEventAgeMs` route
 * nothing. A published solution marks the routings of its question to its author as answered.
 */
export async function startRoutingConsumers(options: {
  bus: Bus;
  db: Db<SearchSchema>;
  backend: SearchBackend;
  search: ExpertSearch;
  experts: number;
  maxEventAgeMs: number;
}): Promise<Consumer> {
  const { backend, search, experts, maxEventAgeMs } = options;
  const recent = (occurredAt: string) => Date.now() - Date.parse(occurredAt) <= maxEventAgeMs;
  const published: EventHandlers<'content', (typeof ignored)[number] | 'content.question.validation-requested.v1'> = {
    'content.question.published.v1': async (tx, { id, occurred_at, data: { question } }) => {
      if (!recent(occurred_at)) return;
      await routeQuestion(
        tx as Tx<SearchSchema>,
        search,
        await backend.routingsPerExpertPerWeek(),
        {
          event_id: id,
          reason: 'published',
          requested_by: null,
          question: {
            id: question.id,
            title: question.title,
            text: question.description_text,
            tags: question.tags.map((t) => t.label),
            language: question.language,
            author_id: question.author_id,
            knowledge_space_id: question.knowledge_space?.id ?? null,
          },
        },
        experts,
      );
    },
    'content.solution.published.v1': async (tx, { occurred_at, data: { solution } }) => {
      await markAnswered(tx as Tx<SearchSchema>, solution.question_id, solution.author_id, new Date(solution.published ?? occurred_at));
    },
  };
  const validation: EventHandlers<'content', (typeof ignored)[number] | keyof typeof published> = {
    'content.question.validation-requested.v1': async (tx, { id, occurred_at, data: { question, requested_by } }) => {
      if (!recent(occurred_at)) return;
      const indexed = await backend.question(question.id);
      // Published before it was asked to be validated: this instance will know it in a moment.
      if (!indexed) throw new Error(`question ${question.id} is not in the index yet`);
      await routeQuestion(
        tx as Tx<SearchSchema>,
        search,
        await backend.routingsPerExpertPerWeek(),
        { event_id: id, reason: 'validation', requested_by, question: indexed },
        experts,
      );
    },
  };
  const { bus, db } = options;
  const consumers = await Promise.all([
    startConsumer({
      bus,
      db,
      durable: 'search-routing',
      stream: 'content',
      filter: 'content.*.published.v1',
      ignore: [...ignored, 'content.question.validation-requested.v1'],
      handlers: published,
    }),
    startConsumer({
      bus,
      db,
      durable: 'search-validation',
      stream: 'content',
      filter: 'content.question.validation-requested.v1',
      ignore: [...ignored, 'content.question.published.v1', 'content.solution.published.v1'],
      handlers: validation,
    }),
  ]);
  return {
    caughtUp: async () => {
      await Promise.all(consumers.map((c) => c.caughtUp()));
    },
    stop: async () => {
      await Promise.all(consumers.map((c) => c.stop()));
    },
  };
}
