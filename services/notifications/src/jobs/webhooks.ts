import { type Bus, backoff } from '@kn/bus';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { NotificationsConfig } from '../config.ts';
import type { NotificationsSchema } from '../db/schema.ts';
import { outboundPoster, RefusedTarget } from '../domain/outbound.ts';
import { getNetwork } from '../domain/settings.ts';
import { sign, webhookBody, webhookSecretSource } from '../domain/webhooks.ts';
import { claimDue, startWorker } from './worker.ts';

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
