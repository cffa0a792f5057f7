import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

const ms = (fallback: number, description: string) => z.coerce.number().int().min(1).default(fallback).describe(description);
const count = (fallback: number, description: string) => z.coerce.number().int().min(1).default(fallback).describe(description);

export const NotificationsConfig = BaseConfig.extend({
  SMTP_URL: z
    .string()
    .default('smtp://127.0.0.1:25')
    .describe('SMTP server for notification emails, for example `smtp://user:pass@mail.example.com:587`.'),
  EMAIL_FROM: z.string().default('Knowledge Network <no-reply@knowledge-network.invalid>').describe('The sender of notification emails.'),
  PUBLIC_URL: z
    .string()
    .default('http://localhost:8080')
    .describe("Where users open the web client: links in emails are PUBLIC_URL + the notification's url."),
  EMAIL_RETRY_BASE_MS: ms(30_000, 'First retry of a failed email (ms); each next one waits twice as long, up to RETRY_MAX_DELAY_MS.'),
  EMAIL_MAX_ATTEMPTS: count(8, 'Attempts at an email before it is given up (and logged).'),
  WEBHOOK_RETRY_BASE_MS: ms(
    10_000,
    'First retry of a failed webhook call (ms); each next one waits twice as long, up to RETRY_MAX_DELAY_MS.',
  ),
  WEBHOOK_MAX_ATTEMPTS: count(10, 'Attempts at a webhook call before it is given up (and logged).'),
  RETRY_MAX_DELAY_MS: ms(3_600_000, 'Longest wait between two attempts at an email or a webhook call (ms).'),
  WEBHOOK_TIMEOUT_MS: ms(10_000, 'A webhook receiver slower than this (ms) counts as a failed attempt.'),
  WEBHOOK_ALLOW_INTERNAL: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      "`true` delivers webhooks to loopback, private, link-local and other non-public addresses; otherwise the receiver's name is resolved before each delivery and a delivery to such an address is refused (recorded as failed). Only for a receiver inside your own network; set it for the users service too.",
    ),
  DELIVERY_LEASE_MS: ms(60_000, 'How long a worker owns a claimed outbox row (ms) before another instance may take it over.'),
  OUTBOX_POLL_MS: ms(1_000, 'Fallback poll of the email and webhook outboxes (ms); new rows of this instance wake the workers at once.'),
  WEBHOOK_SECRET_TTL_MS: ms(30_000, 'How long the webhook secret fetched from the users service is reused (ms).'),
  NOTIFY_MAX_EVENT_AGE_MS: ms(
    86_400_000,
    'Content events older than this (ms) notify nobody (first start on a long stream, replays); one day.',
  ),
  DIGEST_INTERVAL_MS: ms(3_600_000, "How often the digest job checks whether last month's digest is due (ms)."),
});
export type NotificationsConfig = z.infer<typeof NotificationsConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(NotificationsConfig, env);
