import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const NotificationsConfig = BaseConfig.extend({
  /** SMTP server for notification emails, for example `smtp://user:pass@mail.example.com:587`. */
  SMTP_URL: z.string().default('smtp://127.0.0.1:25'),
  EMAIL_FROM: z.string().default('Knowledge Network <no-reply@knowledge-network.invalid>'),
  /** Where users open the web client: links in emails are PUBLIC_URL + the notification's url. */
  PUBLIC_URL: z.string().default('http://localhost:8080'),
  /** Email and webhook outboxes: first retry after the base delay, doubling up to the maximum. */
  EMAIL_RETRY_BASE_MS: ms(30_000),
  EMAIL_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(8),
  WEBHOOK_RETRY_BASE_MS: ms(10_000),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  RETRY_MAX_DELAY_MS: ms(3_600_000),
  /** A webhook receiver slower than this counts as a failed attempt. */
  WEBHOOK_TIMEOUT_MS: ms(10_000),
  /** How long a worker owns a claimed outbox row before another instance may take it over. */
  DELIVERY_LEASE_MS: ms(60_000),
  /** Fallback poll of the outboxes (new rows of this instance wake the workers at once). */
  OUTBOX_POLL_MS: ms(1_000),
  /** How long the webhook secret fetched from the users service is reused. */
  WEBHOOK_SECRET_TTL_MS: ms(30_000),
  /** Content events older than this notify nobody (first start on a long stream, replays); default one day. */
  NOTIFY_MAX_EVENT_AGE_MS: ms(86_400_000),
  /** How often the digest job checks whether last month's digest is due. */
  DIGEST_INTERVAL_MS: ms(3_600_000),
});
export type NotificationsConfig = z.infer<typeof NotificationsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(NotificationsConfig, env);
