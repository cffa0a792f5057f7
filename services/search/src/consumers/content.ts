import { type Bus, type Consumer, type EventHandlers, startConsumer } from '@kn/bus';
import { type StreamSubject, subjectsExcept } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { SearchBackend } from '../core/backend.ts';
import type { SearchSchema } from '../db/schema.ts';
import type { ExpertSearch } from '../domain/expert-search.ts';
import { markAnswered, routeQuestion } from '../domain/routing.ts';

/** What each routing consumer handles; the other content events route nothing. */
const published = ['content.question.published.v1', 'content.solution.published.v1'] as const;
const validationRequested = ['content.question.validation-requested.v1'] as const;
type Unhandled<H extends StreamSubject<'content'>> = Exclude<StreamSubject<'content'>, H>;

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
  const routing: EventHandlers<'content', Unhandled<(typeof published)[number]>> = {
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
  const validation: EventHandlers<'content', Unhandled<(typeof validationRequested)[number]>> = {
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
      ignore: subjectsExcept('content', published),
      handlers: routing,
    }),
    startConsumer({
      bus,
      db,
      durable: 'search-validation',
      stream: 'content',
      filter: 'content.question.validation-requested.v1',
      ignore: subjectsExcept('content', validationRequested),
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
