import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import { subjectsExcept } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';
import { type ChatNotifier, excerpt, recordAsked } from '../domain/notify.ts';

const handled = [
  'content.question.forwarded.v1',
  'content.question.shared.v1',
  'content.solution.shared.v1',
  'content.solution.published.v1',
  'content.solution.expired.v1',
] as const;
const ignored = subjectsExcept('content', handled);
type T = Tx<ChatSchema>;

/** Forwards, shares, new solutions for the asker (with an accept button) and expired solutions for their authors. */
export function contentHandlers(notify: ChatNotifier): EventHandlers<'content', (typeof ignored)[number]> {
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
    'content.question.shared.v1': async (tx, { id, data }) => {
      await notify(tx as T, {
        eventId: id,
        type: 'share_question',
        recipients: data.recipients,
        question: data.question,
        render: (r) => r.questionNotice(data.question, 'A question was shared with you'),
      });
    },
    'content.solution.shared.v1': async (tx, { id, data }) => {
      await notify(tx as T, {
        eventId: id,
        type: 'share_solution',
        recipients: data.recipients,
        question: data.question,
        render: (r) => r.questionNotice(data.question, 'A solution was shared with you'),
      });
    },
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
    'content.solution.expired.v1': async (tx, { id, data }) => {
      await notify(tx as T, {
        eventId: id,
        type: 'validation_request',
        recipients: [data.solution.author_id],
        question: data.question,
        render: (r) => r.questionNotice(data.question, 'Your solution has expired: please check whether it is still valid'),
      });
    },
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
