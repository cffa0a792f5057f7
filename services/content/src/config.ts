import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const ContentConfig = BaseConfig.extend({
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024)
    .describe('Largest attachment accepted (bytes); larger uploads get 413 FileTooLarge.'),
  HTML_MAX_DEPTH: z.coerce
    .number()
    .int()
    .min(8)
    .max(10_000)
    .default(256)
    .describe(
      'Elements open at once, at most, in a description or an HTML attachment; deeper HTML gets 422 ContentTooComplex, refused as soon as the parser reaches that depth.',
    ),
  DOCUMENT_MAX_UNPACKED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(16 * 1024 * 1024)
    .describe(
      "Largest part of a DOCX attachment unpacked to read its text (bytes; the document's XML, 16 MiB by default: thousands of pages); a larger one gets 413 ContentTooLarge, refused by the zip's headers before anything is unpacked.",
    ),
  TEXT_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(32)
    .default(2)
    .describe(
      "Worker threads that sanitize large descriptions and read attachments' text (started when needed), so the event loop serves other requests meanwhile; more work than they take waits, up to 8 jobs a thread, then gets 503.",
    ),
  TEXT_WORK_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(32)
    .default(256)
    .describe(
      'Memory (MiB) one worker thread may hold while it sanitizes or reads a file (heap and array buffers); past it the thread is ended and the request gets 422 ContentTooComplex.',
    ),
  DESCRIPTION_TIME_LIMIT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(5_000)
    .describe(
      'How long sanitizing one description may take in its worker thread (ms; 10 MiB of ordinary HTML takes about 1 s); past it the request gets 422 ContentTooComplex.',
    ),
  DOCUMENT_TIME_LIMIT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(20_000)
    .describe(
      "How long reading one attachment's text (PDF, DOCX, HTML) may take in its worker thread (ms); past it the upload gets 422 ContentTooComplex and its bytes are removed.",
    ),
  SOLUTION_EXPIRY_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe('How often the solution-expiry job looks for expired solutions (ms); one instance works per round.'),
  CONTENT_VIEW_EVENTS_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe(
      'How often the views counted since the last round are sent as one content.question.views-counted.v1 per 1,000 questions (ms); one instance works per round.',
    ),
});
export type ContentConfig = z.infer<typeof ContentConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(ContentConfig, env);
