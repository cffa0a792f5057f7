import { type Db, sql } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { NotificationsSchema } from '../db/schema.ts';
import { monthRange } from './email.ts';
import { deliverable, emailSettingsOf, getNetwork } from './settings.ts';

/** `YYYY-MM` of the month before `now` (UTC). */
export function previousMonth(now: Date) {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * The monthly digest: once the month is over, every user with unread notifications of that month
 * and digest_email_enabled (and email_enabled, and network email delivery) gets one digest email.
 * Every instance runs the timer; a transaction-scoped advisory lock lets one do a round at a time,
 * and the unique (user_id, period) of digest rows makes a second round change nothing.
 */
export function startDigestJob(deps: { db: Db<NotificationsSchema>; logger: Logger; onQueued(): void }, options: { intervalMs: number }) {
  const { db } = deps;
  let running: Promise<number> | undefined;

  async function round(now = new Date()): Promise<number> {
    const period = previousMonth(now);
    const { from, to } = monthRange(period);
    const queued = await db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtext('notifications.digest')) as locked`.execute(
        tx,
      );
      if (!rows[0]?.locked) return 0;
      if (!(await getNetwork(tx)).email_delivery_enabled) return 0;
      const candidates = await tx
        .selectFrom('notifications as n')
        .innerJoin('user_projection as u', 'u.id', 'n.user_id')
        .select(['u.id', 'u.email', 'u.email_settings', 'u.is_deleted'])
        .where('n.is_read', '=', false)
        .where('n.created', '>=', from)
        .where('n.created', '<', to)
        .where('u.is_deleted', '=', false)
        .groupBy(['u.id', 'u.email', 'u.email_settings', 'u.is_deleted'])
        .execute();
      const due = candidates.filter((u) => {
        const s = emailSettingsOf(u);
        return s.email_enabled && s.digest_email_enabled && deliverable(u.email);
      });
      if (due.length === 0) return 0;
      const inserted = await tx
        .insertInto('email_outbox')
        .values(
          due.map((u) => ({
            user_id: u.id,
            kind: 'digest' as const,
            notification_id: null,
            period,
            locked_until: null,
            last_error: null,
            sent: null,
          })),
        )
        .onConflict((c) => c.columns(['user_id', 'period']).where('kind', '=', 'digest').doNothing())
        .returning('id')
        .execute();
      return inserted.length;
    });
    if (queued) {
      deps.logger.info({ period, queued }, 'queued monthly digests');
      deps.onQueued();
    }
    return queued;
  }

  const tick = async () => {
    if (running) return;
    running = round();
    try {
      await running;
    } catch (err) {
      deps.logger.warn({ err }, 'digest round failed');
    } finally {
      running = undefined;
    }
  };
  const timer = setInterval(() => void tick(), options.intervalMs);
  timer.unref();
  return {
    /** One round as if it were `now` (tests). */
    runOnce: async (now?: Date) => {
      while (running) await running.catch(() => 0);
      return round(now);
    },
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => 0);
    },
  };
}
