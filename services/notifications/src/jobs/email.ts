import { backoff } from '@kn/bus';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import nodemailer from 'nodemailer';
import type { NotificationsConfig } from '../config.ts';
import type { NotificationsSchema } from '../db/schema.ts';
import { renderEmail } from '../domain/email.ts';
import { claimDue, startWorker } from './worker.ts';

/**
 * Sends email_outbox rows through SMTP. Rows are claimed with SKIP LOCKED and a lease; the mail is
 * rendered at send time in the receiver's interface language (text and HTML parts). A refused or
 * failed send is recorded and retried with exponential backoff until EMAIL_MAX_ATTEMPTS (`failed`).
 * Deleted users and reserved `.invalid` addresses are `skipped`.
 */
export function startEmailWorker(deps: { db: Db<NotificationsSchema>; config: NotificationsConfig; logger: Logger }) {
  const { db, config } = deps;
  // One pooled set of SMTP connections (5 by default) instead of a connection per message.
  const smtpUrl = new URL(config.SMTP_URL);
  if (!smtpUrl.searchParams.has('pool')) smtpUrl.searchParams.set('pool', 'true');
  const transport = nodemailer.createTransport(smtpUrl.toString());

  async function send(row: {
    id: number;
    user_id: number;
    kind: string;
    notification_id: number | null;
    period: string | null;
    content: unknown;
    attempts: number;
  }) {
    try {
      const { user, mail } = await renderEmail(db, config, row);
      if (!mail) {
        await db.updateTable('email_outbox').set({ status: 'skipped', locked_until: null }).where('id', '=', row.id).execute();
        return;
      }
      await transport.sendMail({
        from: config.EMAIL_FROM,
        to: user.email,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: { 'X-KN-Email-Id': String(row.id) },
      });
      await db
        .updateTable('email_outbox')
        .set({ status: 'sent', sent: new Date(), locked_until: null, last_error: null })
        .where('id', '=', row.id)
        .execute();
    } catch (err) {
      const giveUp = row.attempts >= config.EMAIL_MAX_ATTEMPTS;
      deps.logger.warn({ err: (err as Error).message, email_id: row.id, attempt: row.attempts, giveUp }, 'email not sent');
      await db
        .updateTable('email_outbox')
        .set({
          status: giveUp ? 'failed' : 'pending',
          next_attempt: new Date(Date.now() + backoff(row.attempts, config.EMAIL_RETRY_BASE_MS, config.RETRY_MAX_DELAY_MS)),
          locked_until: null,
          last_error: String((err as Error).message).slice(0, 1000),
        })
        .where('id', '=', row.id)
        .execute();
    }
  }

  const worker = startWorker({
    name: 'email',
    pollMs: config.OUTBOX_POLL_MS,
    logger: deps.logger,
    round: async () => {
      const claimed = await claimDue(db, 'email_outbox', config.DELIVERY_LEASE_MS, [
        'id',
        'user_id',
        'kind',
        'notification_id',
        'period',
        'content',
        'attempts',
      ]);
      await Promise.all(claimed.map(send));
      return claimed.length;
    },
  });
  return {
    ...worker,
    stop: async () => {
      await worker.stop();
      transport.close();
    },
  };
}
