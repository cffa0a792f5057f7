import { createHmac } from 'node:crypto';
import { type Bus, call, internalRequestId } from '@kn/bus';
import { usersOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';
import { presentUser, senderId } from './present.ts';
import { getNetwork } from './settings.ts';

export const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The webhook secret lives only in the users service; asked for over request/reply and kept briefly. */
export function webhookSecretSource(bus: Bus, ttlMs: number) {
  let cached: { at: number; secret: string | null } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < ttlMs) return cached.secret;
    const { secret } = await call(bus, 'getWebhookSecret', usersOperations.getWebhookSecret, {
      actor: null,
      params: undefined,
      query: undefined,
      body: {},
      requestId: internalRequestId(),
      url: '',
    });
    cached = { at: Date.now(), secret };
    return secret;
  };
}

/** The body POSTed for one notification (docs/notifications.md, "Webhooks"); `content` is deprecated but kept. */
export async function webhookBody(db: Db<NotificationsSchema>, notificationId: number) {
  const n = await db.selectFrom('notifications').selectAll().where('id', '=', notificationId).executeTakeFirstOrThrow();
  const network = await getNetwork(db);
  const sender = senderId(n);
  const ids = sender === null ? [n.user_id] : [n.user_id, sender];
  const users = new Map(
    (await db.selectFrom('user_projection').selectAll().where('id', 'in', ids).execute()).map((u) => [u.id, u] as const),
  );
  return {
    id: n.id,
    type: n.type,
    question_id: n.question_id,
    target_id: n.target_id,
    target_type: n.target_type,
    target_object: n.target_object,
    url: n.url,
    icon: n.icon,
    is_read: n.is_read,
    created: n.created.toISOString(),
    sender: sender === null ? null : presentUser(users.get(sender), null, network.anonymize_users_email),
    receiver: presentUser(users.get(n.user_id), null, network.anonymize_users_email),
    content: n.content,
  };
}
