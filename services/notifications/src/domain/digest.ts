import type { Tx } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';
import { monthRange } from './email.ts';
import { deliverable, emailSettingsOf, getNetwork } from './settings.ts';

/** `YYYY-MM` of the month before `now` (UTC). */
export function previousMonth(now: Date) {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * The monthly digest: once the month before `now` is over, every user with unread notifications
 * of that month and digest_email_enabled (and email_enabled, and network email delivery) gets one
 * digest email. The unique (user_id, period) of digest rows makes a second round change nothing.
 * Answers the month and how many digests were queued.
 */
export async function queueDigests(tx: Tx<NotificationsSchema>, now: Date): Promise<{ period: string; queued: number }> {
  const period = previousMonth(now);
  const { from, to } = monthRange(period);
  if (!(await getNetwork(tx)).email_delivery_enabled) return { period, queued: 0 };
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
  if (due.length === 0) return { period, queued: 0 };
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
  return { period, queued: inserted.length };
}
