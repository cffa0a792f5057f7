import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import { type ChatNotificationType, type EventPayload, subjectsExcept } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';
import { type ChatNotifier, excerpt, recordAsked } from '../domain/notify.ts';

const handled = [
  'content.question.forwarded.v1',
  'content.question.shared.v1',
  'content.solution.shared.v1',
  'content.solution.published.v1',
  'content.solution.expired.v1',
  'content.question.validation-requested.v1',
] as const;
const ignored = subjectsExcept('content', handled);
type T = Tx<ChatSchema>;

type Handlers = EventHandlers<'content', (typeof ignored)[number]>;

/**
 * Forwards, shares, new solutions for the asker (with an accept button), and expired solutions
 * and validation requests for the solutions' authors.
 */
export function contentHandlers(notify: ChatNotifier): Handlers {
  /** An event whose message is a link to its question, saying what happened, to `recipients` of it. */
  const notice =
    <S extends keyof Handlers>(type: ChatNotificationType, what: string, recipients: (data: EventPayload<S>) => number[]) =>
    async (tx: Tx<unknown>, { id, data }: { id: string; data: EventPayload<S> }) => {
      const { question } = data as EventPayload<S> & { question: { id: number; title: string } };
      await notify(tx as T, {
        eventId: id,
        type,
        recipients: recipients(data),
        question,
        render: (r) => r.questionNotice(question, what),
      });
    };
  return {
    'content.question.forwarded.v1': async (tx, { id, data }) => {
      await recordAsked(tx as T, data.question.id, [data.recipient_id]);
      await notify(tx as T, {
        eventId: id,
        type: 'question_forwarded',
        recipients: [data.recipient_id],
        question: data.question,
        render: (r) => r.expertAsked(data.question, 'forwarded', data.message),
      });
    },
    'content.question.shared.v1': notice<'content.question.shared.v1'>(
      'share_question',
      'A question was shared with you',
      (d) => d.recipients,
    ),
    'content.solution.shared.v1': notice<'content.solution.shared.v1'>(
      'share_solution',
      'A solution was shared with you',
      (d) => d.recipients,
    ),
    'content.solution.published.v1': async (tx, { id, data }) => {
      const { question, solution } = data;
      if (solution.author_id === question.author_id) return;
      await notify(tx as T, {
        eventId: id,
        type: 'new_solution_to_your_question',
        recipients: [question.author_id],
        question,
        render: (r) => r.newSolution(question, { id: solution.id, excerpt: excerpt(solution.text) }),
      });
    },
    // The question's experts are asked again by the routing (search.experts.found.v1, reason validation);
    // the authors of its expired solutions are asked to check theirs.
    'content.question.validation-requested.v1': notice<'content.question.validation-requested.v1'>(
      'validation_request',
      'Please check whether your solution to this question is still valid: its validation was requested',
      (d) => d.expired_solutions.map((s) => s.author_id),
    ),
    'content.solution.expired.v1': notice<'content.solution.expired.v1'>(
      'validation_request',
      'Your solution has expired: please check whether it is still valid',
      (d) => [d.solution.author_id],
    ),
  };
}

export function startContentConsumer(options: { bus: Bus; db: Db<ChatSchema>; notify: ChatNotifier }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'chat-content',
    stream: 'content',
    ignore: ignored,
    handlers: contentHandlers(options.notify),
  });
}
