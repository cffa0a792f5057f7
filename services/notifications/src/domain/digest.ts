import type { AnalyticsDigest } from '@kn/contracts';
import { type Db, json, type Tx } from '@kn/db';
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

/**
 * The weekly analytics digest of a person (its figures computed by the analytics service), queued
 * if they take email: network delivery on, email_enabled, a deliverable address. One per person
 * and week (a unique index): a second hand-over of the same week queues nothing. A person this
 * service has not projected yet is an error, so that the analytics service tries again later.
 */
export async function queueAnalyticsDigest(db: Db<NotificationsSchema>, userId: number, digest: AnalyticsDigest): Promise<boolean> {
  const user = await db
    .selectFrom('user_projection')
    .select(['email', 'email_settings', 'is_deleted'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw new Error(`user ${userId} is not known here yet`);
  if (!(await getNetwork(db)).email_delivery_enabled) return false;
  if (user.is_deleted || !deliverable(user.email) || !emailSettingsOf(user).email_enabled) return false;
  const inserted = await db
    .insertInto('email_outbox')
    .values({
      user_id: userId,
      kind: 'analytics_digest',
      notification_id: null,
      period: digest.week,
      content: json(digest),
      locked_until: null,
      last_error: null,
      sent: null,
    })
    .onConflict((c) => c.columns(['user_id', 'period']).where('kind', '=', 'analytics_digest').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}
