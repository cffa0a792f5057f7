import path from 'node:path';
import { contentTooComplex, contentTooLarge, serviceUnavailable } from '@kn/contracts';
import { deadlineLeft } from '@kn/db';
import { startWorkerPool, WorkerLimitError } from '@kn/service/worker-pool';
import type { Logger } from '@kn/telemetry';
import type { ContentConfig } from '../config.ts';
import { type Sanitized, sanitizeDescription } from './html.ts';
import { LimitExceeded, type Refusal } from './limits.ts';
import sourceFolder from './location.cjs';
import type { TextJob, TextResult, TextWorkSetup } from './text-worker.ts';

/**
 * Descriptions up to this many characters are sanitized on the request's own thread: the slowest
 * HTML measured takes about 30 ms at twice this (docs/measurements.md), and most descriptions are
 * far smaller, so they skip the round trip to a worker. Larger ones go to a worker.
 */
export const INLINE_HTML_CHARS = 32 * 1024;
/** Jobs that may wait for a busy worker thread, per thread; more are refused with 503. */
const WAITING_PER_THREAD = 8;

export interface TextWork {
  /** The sanitized description (html.ts), or 422 ContentTooComplex naming `field`. */
  sanitize(html: string, field?: string): Promise<Sanitized>;
  /** The searchable text of an attachment (attachments-text.ts), or 413/422 for the field `file`. */
  extract(bytes: Uint8Array, mimeType: string, name: string): Promise<string>;
  stop(): Promise<void>;
}

function refuse(refusal: Refusal, field: string) {
  const message = `${field}: ${refusal.message}`;
  const errors = [{ path: field, code: refusal.kind === 'too_large' ? 'too_big' : 'too_complex', message: refusal.message }];
  return refusal.kind === 'too_large' ? contentTooLarge(message, errors) : contentTooComplex(message, errors);
}

/**
 * Sanitizing and text extraction with limits, on every path: depth while parsing (html.ts), sizes
 * from a zip's headers (zip.ts), and time and memory of the worker thread everything but small
 * descriptions runs in (startWorkerPool). A limit passed is 413 ContentTooLarge or 422
 * ContentTooComplex; no free thread and no room in the queue, or the caller's deadline, is 503.
 */
export function startTextWork(
  config: Pick<
    ContentConfig,
    | 'HTML_MAX_DEPTH'
    | 'DOCUMENT_MAX_UNPACKED_BYTES'
    | 'TEXT_WORKERS'
    | 'TEXT_WORK_MEMORY_MB'
    | 'DESCRIPTION_TIME_LIMIT_MS'
    | 'DOCUMENT_TIME_LIMIT_MS'
  >,
  logger: Logger,
): TextWork {
  const pool = startWorkerPool<TextJob, TextResult>({
    file: path.join(sourceFolder, 'text-worker.ts'),
    name: 'text work',
    threads: config.TEXT_WORKERS,
    timeLimitMs: config.DESCRIPTION_TIME_LIMIT_MS,
    memoryLimitMb: config.TEXT_WORK_MEMORY_MB,
    maxWaiting: config.TEXT_WORKERS * WAITING_PER_THREAD,
    setup: { maxDepth: config.HTML_MAX_DEPTH, maxUnpackedBytes: config.DOCUMENT_MAX_UNPACKED_BYTES } satisfies TextWorkSetup,
  });

  async function run(job: TextJob, timeLimitMs: number, field: string, what: string): Promise<TextResult> {
    const left = deadlineLeft();
    let result: TextResult;
    try {
      result = await pool.run(job, { timeLimitMs, deadline: left === undefined ? undefined : Date.now() + left });
    } catch (err) {
      if (!(err instanceof WorkerLimitError)) throw err;
      if (err.limit === 'time') throw refuse({ kind: 'too_complex', message: `${what} takes longer than ${timeLimitMs} ms` }, field);
      if (err.limit === 'memory')
        throw refuse({ kind: 'too_complex', message: `${what} needs more than ${config.TEXT_WORK_MEMORY_MB} MiB` }, field);
      throw serviceUnavailable(
        err.limit === 'busy' ? 'the content service is busy reading other texts; try again shortly' : 'no time was left to read the text',
      );
    }
    if ('refused' in result) {
      logger.info({ field, reason: result.refused.message }, 'refused a text past a limit');
      throw refuse(result.refused, field);
    }
    return result;
  }

  return {
    async sanitize(html, field = 'description') {
      if (html.length <= INLINE_HTML_CHARS) {
        try {
          return sanitizeDescription(html, { maxDepth: config.HTML_MAX_DEPTH });
        } catch (err) {
          if (err instanceof LimitExceeded) throw refuse(err, field);
          throw err;
        }
      }
      const result = await run({ sanitize: html }, config.DESCRIPTION_TIME_LIMIT_MS, field, 'sanitizing');
      if (!('sanitized' in result)) throw new Error('the text worker answered a sanitizing with something else');
      return result.sanitized;
    },

    async extract(bytes, mimeType, name) {
      const result = await run({ extract: { bytes, mimeType, name } }, config.DOCUMENT_TIME_LIMIT_MS, 'file', 'reading the text');
      if (!('text' in result)) throw new Error('the text worker answered an extraction with something else');
      if (result.unreadable !== undefined)
        logger.warn({ mime_type: mimeType, reason: result.unreadable }, 'could not extract text from an attachment');
      return result.text;
    },

    stop: () => pool.stop(),
  };
}
