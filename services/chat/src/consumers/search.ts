import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import type { Db, Tx } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';
import { type ChatNotifier, recordAsked } from '../domain/notify.ts';

/** Routing decisions: each expert gets the question as a direct message with answer / not me / forward. */
export function searchHandlers(notify: ChatNotifier): EventHandlers<'search'> {
  return {
    'search.experts.found.v1': async (tx, { id, data }) => {
      const { question, reason, experts } = data;
      const ids = experts.map((e) => e.user_id);
      await recordAsked(tx as Tx<ChatSchema>, question.id, [question.author_id, ...ids]);
      await notify(tx as Tx<ChatSchema>, {
        // A validation request is keyed by the request itself, as the chat's notice to the expired
        // solutions' authors is: an author who is also one of the experts gets one message of it.
        eventId: reason === 'validation' ? data.source_event_id : id,
        type: reason === 'published' ? 'new_question' : 'validation_request',
        recipients: ids,
        question,
        render: (r) => r.expertAsked(question, reason === 'published' ? 'published' : 'validation'),
      });
    },
  };
}

export function startSearchConsumer(options: { bus: Bus; db: Db<ChatSchema>; notify: ChatNotifier }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'chat-search',
    stream: 'search',
    ignore: [],
    // Each routing decision is a message of its own: a burst of them is written side by side.
    concurrency: 8,
    handlers: searchHandlers(options.notify),
  });
}
