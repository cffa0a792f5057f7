import { writeEvent } from '@kn/bus';
import type { NotificationTargetType, NotificationType } from '@kn/contracts';
import { afterCommit, json, type Tx } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';
import { getNetwork, languageOf, wantsEmail } from './settings.ts';
import { actorName, lang, notificationText } from './templates.ts';

export interface Target {
  target_type: NotificationTargetType;
  target_id: number;
  /** The target as the event carried it: the webhook's `target_object`. Never the poser's id. */
  target_object: Record<string, unknown>;
}

/** What one event is about, shared by every notification it causes. */
export interface Cause extends Target {
  eventId: string;
  /** When the event happened (envelope `occurred_at`). */
  occurredAt: string;
  /** Who caused it; null for the system (expiry job). */
  actorId: number | null;
  /** The actor acted as the (anonymous) question poser: they are not named. */
  anonymous: boolean;
  question: { id: number; title: string; knowledge_space_id: number | null };
  /** What the sender wrote with a forward or share. */
  message?: string | null;
}

/** One receiver with the type they get; the first draft for a receiver wins (most specific first). */
export interface Draft {
  user_id: number;
  type: NotificationType;
  target?: Target;
  anonymous?: boolean;
}

export const notificationUrl = (t: { question_id: number; target_type: string; target_id: number }) =>
  t.target_type === 'question' ? `/questions/${t.question_id}` : `/questions/${t.question_id}#${t.target_type}-${t.target_id}`;

export const notificationIcon = (targetType: string) => `/api/v1/public/images/notifications/${targetType}.png`;

export interface NotifyHooks {
  /**
   * Events older than this notify nobody (their projections still apply): a first start on a
   * stream with years of history, or a replay, must not flood users with stale notifications.
   */
  maxEventAgeMs: number;
  /** Called once the transaction that created notifications committed: the workers can claim their rows then. */
  created(counts: { emails: number; webhooks: number }): void;
}

/**
 * Creates the notifications one event causes, in the consumer's transaction: never for the actor,
 * never for deleted users, only for members when the question is in a closed knowledge space, and
 * at most one per receiver and event (also across redeliveries: unique (event_id, user_id)). Each
 * gets its event, its email (when the settings allow) and its webhook delivery (when configured).
 */
export async function notify(tx: Tx<NotificationsSchema>, cause: Cause, drafts: Draft[], hooks?: NotifyHooks) {
  if (hooks && Date.now() - Date.parse(cause.occurredAt) > hooks.maxEventAgeMs) return [];
  const byUser = new Map<number, Draft>();
  for (const d of drafts) {
    if (d.user_id === cause.actorId || byUser.has(d.user_id) || !Number.isInteger(d.user_id) || d.user_id <= 0) continue;
    byUser.set(d.user_id, d);
  }
  if (byUser.size === 0) return [];
  const ids = [...byUser.keys()];
  const users = new Map(
    (await tx.selectFrom('user_projection').selectAll().where('id', 'in', ids).execute()).map((u) => [u.id, u] as const),
  );
  let members: Set<number> | undefined;
  if (cause.question.knowledge_space_id !== null) {
    const space = await tx
      .selectFrom('space_projection')
      .selectAll()
      .where('id', '=', cause.question.knowledge_space_id)
      .executeTakeFirst();
    if (space?.is_closed) members = new Set(space.member_ids);
  }
  const receivers = ids.filter((id) => !users.get(id)?.is_deleted && (!members || members.has(id)));
  if (receivers.length === 0) return [];

  const network = await getNetwork(tx);
  const actor =
    cause.actorId === null
      ? undefined
      : await tx.selectFrom('user_projection').selectAll().where('id', '=', cause.actorId).executeTakeFirst();
  const rows = receivers.map((userId) => {
    const draft = byUser.get(userId) as Draft;
    const target = draft.target ?? cause;
    const anonymous = draft.anonymous ?? cause.anonymous;
    const language = lang(languageOf(users.get(userId), network));
    const name = actorName(language, actor, cause.actorId === null ? 'system' : anonymous ? 'poser' : 'user');
    return {
      user_id: userId,
      actor_id: cause.actorId,
      anonymous,
      type: draft.type,
      target_type: target.target_type,
      target_id: target.target_id,
      question_id: cause.question.id,
      content: notificationText(language, draft.type, name, cause.question.title),
      url: notificationUrl({ question_id: cause.question.id, ...target }),
      icon: notificationIcon(target.target_type),
      message: cause.message?.trim() || null,
      target_object: json(target.target_object),
      event_id: cause.eventId,
    };
  });
  const inserted = await tx
    .insertInto('notifications')
    .values(rows)
    .onConflict((c) => c.columns(['event_id', 'user_id']).doNothing())
    .returningAll()
    .execute();
  if (inserted.length === 0) return [];

  for (const n of inserted) {
    await writeEvent(
      tx,
      'notifications.notification.created.v1',
      {
        notification: {
          id: n.id,
          user_id: n.user_id,
          actor_id: n.anonymous ? null : n.actor_id,
          type: n.type,
          target_type: n.target_type,
          target_id: n.target_id,
          question_id: n.question_id,
          content: n.content,
          url: n.url,
          icon: n.icon,
          created: n.created.toISOString(),
        },
      },
      { actorId: n.anonymous ? null : n.actor_id },
    );
  }
  const emails = inserted.filter((n) => wantsEmail(network, users.get(n.user_id), n.type));
  if (emails.length)
    await tx
      .insertInto('email_outbox')
      .values(
        emails.map((n) => ({
          user_id: n.user_id,
          kind: 'notification' as const,
          notification_id: n.id,
          period: null,
          locked_until: null,
          last_error: null,
          sent: null,
        })),
      )
      .execute();
  const webhookUrl = network.webhook_enabled ? network.webhook_url : null;
  if (webhookUrl)
    await tx
      .insertInto('webhook_deliveries')
      .values(
        inserted.map((n) => ({
          notification_id: n.id,
          url: webhookUrl,
          locked_until: null,
          last_status_code: null,
          last_error: null,
          delivered: null,
        })),
      )
      .execute();
  if (hooks) {
    const counts = { emails: emails.length, webhooks: webhookUrl ? inserted.length : 0 };
    afterCommit(tx, () => hooks.created(counts));
  }
  return inserted;
}
