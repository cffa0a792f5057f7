import { createHmac } from 'node:crypto';
import { type Bus, call, internalRequestId } from '@kn/bus';
import { usersOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { NotificationsConfig } from '../config.ts';
import type { NotificationsSchema } from '../db/schema.ts';
import { outboundPoster, RefusedTarget } from './outbound.ts';
import { presentUser, senderId } from './present.ts';
import { getNetwork } from './settings.ts';
import { backoff, claimDue, startWorker } from './worker.ts';

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

/** The body POSTed for one notification (CONTRACT.md section 7); `content` is deprecated but kept. */
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

/**
 * Delivers webhook_deliveries: POST with X-Event (notifications), X-Event-Id (the delivery's
 * uuid, the same on every attempt, so a receiver can drop repeats) and X-Signature. A 2xx answer
 * delivers; anything else (status, refused connection, timeout) is recorded and retried with
 * exponential backoff until WEBHOOK_MAX_ATTEMPTS, then the delivery is `failed`. A receiver on a
 * non-public address (unless WEBHOOK_ALLOW_INTERNAL) is refused before any traffic: `failed` at once.
 */
export function startWebhookWorker(deps: { db: Db<NotificationsSchema>; bus: Bus; config: NotificationsConfig; logger: Logger }) {
  const { db, config } = deps;
  const secret = webhookSecretSource(deps.bus, config.WEBHOOK_SECRET_TTL_MS);
  const poster = outboundPoster({ allowInternal: config.WEBHOOK_ALLOW_INTERNAL === 'true', timeoutMs: config.WEBHOOK_TIMEOUT_MS });

  async function deliver(row: { id: number; event_id: string; notification_id: number; url: string; attempts: number }) {
    let statusCode: number | null = null;
    let error: string | null = null;
    let refused = false;
    // Switched off since the row was written: pending deliveries stop (recorded, not retried).
    if (!(await getNetwork(db)).webhook_enabled) {
      await db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', locked_until: null, last_error: 'webhooks disabled' })
        .where('id', '=', row.id)
        .execute();
      return;
    }
    try {
      const body = JSON.stringify(await webhookBody(db, row.notification_id));
      const key = await secret();
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-event': 'notifications',
        'x-event-id': row.event_id,
      };
      if (key !== null) headers['x-signature'] = sign(body, key);
      statusCode = await poster.post(row.url, headers, body);
      if (statusCode < 200 || statusCode >= 300) error = `receiver answered ${statusCode}`;
    } catch (err) {
      const e = err as Error & { code?: string };
      // An internal receiver stays refused on every attempt: given up at once.
      refused = err instanceof RefusedTarget;
      error = refused
        ? `refused: ${e.message}`
        : e.name === 'TimeoutError'
          ? `no answer within ${config.WEBHOOK_TIMEOUT_MS} ms`
          : (e.code ?? e.message);
    }
    if (error === null) {
      await db
        .updateTable('webhook_deliveries')
        .set({ status: 'delivered', delivered: new Date(), locked_until: null, last_status_code: statusCode, last_error: null })
        .where('id', '=', row.id)
        .execute();
      return;
    }
    const giveUp = refused || row.attempts >= config.WEBHOOK_MAX_ATTEMPTS;
    await db
      .updateTable('webhook_deliveries')
      .set({
        status: giveUp ? 'failed' : 'pending',
        next_attempt: new Date(Date.now() + backoff(row.attempts, config.WEBHOOK_RETRY_BASE_MS, config.RETRY_MAX_DELAY_MS)),
        locked_until: null,
        last_status_code: statusCode,
        last_error: error,
      })
      .where('id', '=', row.id)
      .execute();
  }

  const worker = startWorker({
    name: 'webhooks',
    pollMs: config.OUTBOX_POLL_MS,
    logger: deps.logger,
    round: async () => {
      const claimed = await claimDue(db, 'webhook_deliveries', config.DELIVERY_LEASE_MS, [
        'id',
        'event_id',
        'notification_id',
        'url',
        'attempts',
      ]);
      await Promise.all(claimed.map(deliver));
      return claimed.length;
    },
  });
  return {
    ...worker,
    async stop() {
      await worker.stop();
      poster.stop();
    },
  };
}
