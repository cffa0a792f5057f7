import { type Actor, forbidden, type Handlers, notFound, type notificationsOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { NotificationRow, NotificationsSchema } from '../db/schema.ts';
import { queueAnalyticsDigest } from '../domain/digest.ts';
import { presentNotification, presentUser, senderId } from '../domain/present.ts';
import { getNetwork } from '../domain/settings.ts';

export function createHandlers(deps: { db: Db<NotificationsSchema>; onEmailQueued(): void }): Handlers<typeof notificationsOperations> {
  const { db } = deps;

  /** Whose notifications: the caller's, or with role on_behalf_user those of `user_id`. */
  function owner(actor: Actor, query: { user_id?: number }) {
    if (query.user_id === undefined || query.user_id === actor.id) return actor.id;
    if (!actor.roles.includes('on_behalf_user')) throw forbidden('user_id needs the role on_behalf_user');
    return query.user_id;
  }

  async function present(rows: NotificationRow[], viewerId: number) {
    const senders = [...new Set(rows.map(senderId).filter((id): id is number => id !== null))];
    const users = senders.length ? await db.selectFrom('user_projection').selectAll().where('id', 'in', senders).execute() : [];
    const byId = new Map(users.map((u) => [u.id, u] as const));
    const { anonymize_users_email } = await getNetwork(db);
    return rows.map((row) => {
      const sender = senderId(row);
      return presentNotification(row, sender === null ? null : presentUser(byId.get(sender), viewerId, anonymize_users_email));
    });
  }

  async function markOne(actor: Actor, id: number, query: { user_id?: number }, set: { is_read?: true; is_seen: true }) {
    const userId = owner(actor, query);
    // Another user's notification is as invisible as a missing one.
    const row = await db
      .updateTable('notifications')
      .set(set)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('notification');
    return (await present([row], userId))[0] as NonNullable<Awaited<ReturnType<typeof present>>[0]>;
  }

  const count = async (userId: number, column: 'is_read' | 'is_seen') => {
    const row = await db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where(column, '=', false)
      .executeTakeFirstOrThrow();
    return { notifications: Number(row.n) };
  };

  return {
    queueAnalyticsDigest: async ({ body }) => {
      const queued = await queueAnalyticsDigest(db, body.user_id, body.digest);
      if (queued) deps.onEmailQueued();
      return { queued };
    },
    countUnreadNotifications: async ({ actor, query }) => count(owner(actor, query), 'is_read'),
    countUnseenNotifications: async ({ actor, query }) => count(owner(actor, query), 'is_seen'),
    listNotifications: async ({ actor, query, url }) => {
      const userId = owner(actor, query);
      let base = db.selectFrom('notifications').where('user_id', '=', userId);
      if (query.ignore_read) base = base.where('is_read', '=', false);
      const [rows, total] = await Promise.all([
        base.selectAll().orderBy('created', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { total: Number(total.n), _links: { self: { href: url } }, items: await present(rows, userId) };
    },
    markAllNotificationsRead: async ({ actor, query }) => {
      // Reading implies having seen.
      const res = await db
        .updateTable('notifications')
        .set({ is_read: true, is_seen: true })
        .where('user_id', '=', owner(actor, query))
        .where('is_read', '=', false)
        .executeTakeFirst();
      return { updated: Number(res.numUpdatedRows) };
    },
    markAllNotificationsSeen: async ({ actor, query }) => {
      const res = await db
        .updateTable('notifications')
        .set({ is_seen: true })
        .where('user_id', '=', owner(actor, query))
        .where('is_seen', '=', false)
        .executeTakeFirst();
      return { updated: Number(res.numUpdatedRows) };
    },
    markNotificationRead: async ({ actor, params, query }) => markOne(actor, params.id, query, { is_read: true, is_seen: true }),
    markNotificationSeen: async ({ actor, params, query }) => markOne(actor, params.id, query, { is_seen: true }),
    listWebhookDeliveries: async ({ query, url }) => {
      let base = db.selectFrom('webhook_deliveries');
      if (query.status) base = base.where('status', '=', query.status);
      const [rows, total] = await Promise.all([
        base.selectAll().orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        total: Number(total.n),
        _links: { self: { href: url } },
        items: rows.map((r) => ({
          id: Number(r.id),
          event_id: r.event_id,
          notification_id: r.notification_id,
          url: r.url,
          status: r.status,
          attempts: r.attempts,
          last_status_code: r.last_status_code,
          last_error: r.last_error,
          created: r.created.toISOString(),
          next_attempt: r.status === 'pending' ? r.next_attempt.toISOString() : null,
          delivered: r.delivered?.toISOString() ?? null,
        })),
      };
    },
  };
}
