import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import type { Db, Tx } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';
import { type NotifyHooks, notify } from '../domain/notify.ts';

/**
 * The experts a question was routed to (search service, `search.experts.found.v1`): `new_question`
 * when it was published (the poser stays anonymous), `validation_new_expert` when someone asked for
 * its solutions to be validated (anonymous when that was the poser).
 */
export function searchHandlers(hooks: NotifyHooks): EventHandlers<'search'> {
  return {
    'search.experts.found.v1': async (tx, { id, occurred_at, data }) => {
      const { question, reason, requested_by, experts } = data;
      const actor = requested_by ?? question.author_id;
      await notify(
        tx as Tx<NotificationsSchema>,
        {
          eventId: id,
          occurredAt: occurred_at,
          actorId: actor,
          anonymous: actor === question.author_id,
          question,
          target_type: 'question',
          target_id: question.id,
          target_object: { id: question.id, title: question.title, knowledge_space_id: question.knowledge_space_id, tags: data.tags },
        },
        experts.map((e) => ({ user_id: e.user_id, type: reason === 'published' ? 'new_question' : 'validation_new_expert' })),
        hooks,
      );
    },
  };
}

export function startSearchConsumer(options: { bus: Bus; db: Db<NotificationsSchema>; hooks: NotifyHooks }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'notifications-search',
    stream: 'search',
    ignore: [],
    handlers: searchHandlers(options.hooks),
  });
}
