import type { AnalyticsDigest } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { NotificationsConfig } from '../config.ts';
import type { NotificationsSchema } from '../db/schema.ts';
import { deliverable, getNetwork, languageOf } from './settings.ts';
import { analyticsDigestMail, digestMail, lang, type Mail, notificationMail } from './templates.ts';

/** Start and end (exclusive) of a `YYYY-MM` month in UTC. */
export function monthRange(period: string) {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

/**
 * An email_outbox row as the mail its receiver gets, in their interface language (text and HTML
 * parts): null for a deleted user, a reserved `.invalid` address, or nothing left to tell. A
 * receiver the users consumer has not projected yet is an error: the row is tried again later.
 */
export async function renderEmail(
  db: Db<NotificationsSchema>,
  config: NotificationsConfig,
  row: { user_id: number; kind: string; notification_id: number | null; period: string | null; content?: unknown },
) {
  const user = await db.selectFrom('user_projection').selectAll().where('id', '=', row.user_id).executeTakeFirst();
  // The users consumer may not have caught up yet: retry later.
  if (!user) throw new Error('receiver not known yet');
  if (user.is_deleted || !deliverable(user.email)) return { user, mail: null };
  const network = await getNetwork(db);
  const language = lang(languageOf(user, network));
  const link = (url: string) => `${config.PUBLIC_URL.replace(/\/$/, '')}${url}`;
  let mail: Mail | null = null;
  if (row.kind === 'notification' && row.notification_id !== null) {
    const n = await db.selectFrom('notifications').selectAll().where('id', '=', row.notification_id).executeTakeFirst();
    if (n) mail = notificationMail(language, network.network_name, n.content, link(n.url));
  } else if (row.kind === 'analytics_digest' && row.content) {
    mail = analyticsDigestMail(language, network.network_name, row.content as AnalyticsDigest, link('/analytics'));
  } else if (row.kind === 'digest' && row.period) {
    const { from, to } = monthRange(row.period);
    const items = await db
      .selectFrom('notifications')
      .select(['content', 'url'])
      .where('user_id', '=', row.user_id)
      .where('is_read', '=', false)
      .where('created', '>=', from)
      .where('created', '<', to)
      .orderBy('created', 'desc')
      .limit(50)
      .execute();
    if (items.length)
      mail = digestMail(
        language,
        network.network_name,
        row.period,
        items.map((i) => ({ content: i.content, link: link(i.url) })),
      );
  }
  return { user, mail };
}
