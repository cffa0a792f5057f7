// The worker thread of text-work.ts: sanitizes large descriptions and reads attachments' text, so
// that the content service's event loop never waits for either and a runaway parse ends with its
// thread, not with the process. Messages: TextJob in, TextResult out.
import { serveJobs } from '@kn/service/worker-pool';
import { extractText } from './attachments-text.ts';
import { type Sanitized, sanitizeDescription } from './html.ts';
import { LimitExceeded, type Refusal } from './limits.ts';

export interface TextWorkSetup {
  maxDepth: number;
  maxUnpackedBytes: number;
}

export type TextJob = { sanitize: string } | { extract: { bytes: Uint8Array; mimeType: string; name: string } };

/** A refusal is an answer, not a failure; `unreadable` says why a file gave no text. */
export type TextResult = { sanitized: Sanitized } | { text: string; unreadable?: string } | { refused: Refusal };

serveJobs<TextJob, TextResult, TextWorkSetup>(async (job, setup) => {
  try {
    if ('sanitize' in job) return { sanitized: sanitizeDescription(job.sanitize, { maxDepth: setup.maxDepth }) };
    const { bytes, mimeType, name } = job.extract;
    try {
      return { text: await extractText(bytes, mimeType, name, setup) };
    } catch (err) {
      if (err instanceof LimitExceeded) throw err;
      // A damaged or mislabelled file is kept without text, as before there were limits.
      return { text: '', unreadable: err instanceof Error ? err.message : String(err) };
    }
  } catch (err) {
    if (err instanceof LimitExceeded) return { refused: { kind: err.kind, message: err.message } };
    throw err;
  }
});
