import { validationError } from '@kn/contracts';
import type { Executor } from '@kn/db';
import { detectLanguage } from '@kn/similarity';
import type { ContentSchema } from '../db/schema.ts';
import type { Sanitized } from './html.ts';

export interface CleanDescription {
  html: string;
  text: string;
  language: string;
  /** Mentioned users that exist and are not deleted (per the users projection), in order of appearance. */
  mentions: number[];
}

/** Mentioned ids that are live users (per the users projection), in order. */
export async function liveMentions(db: Executor<ContentSchema>, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('user_projection').select('id').where('id', 'in', ids).where('is_deleted', '=', false).execute();
  const live = new Set(rows.map((r) => r.id));
  return ids.filter((id) => live.has(id));
}

/**
 * Characters of a text its language is read from: the beginning says it, and the whole of a
 * description of megabytes would hold the event loop for the better part of a second.
 */
const LANGUAGE_SAMPLE_CHARS = 20_000;

/** The language of a text (read from its beginning), or `fallback` when it does not say. */
export const languageOf = (text: string, fallback: string) => detectLanguage(text.slice(0, LANGUAGE_SAMPLE_CHARS), fallback);

/**
 * Completes a solution or comment description sanitized beforehand (TextWork.sanitize, outside the
 * transaction: it may take a worker's time): detects its language (falling back to the
 * question's) and resolves the mentions. A description that is empty once sanitized (for example
 * only a script) is a validation error, like an empty one.
 */
export async function cleanDescription(db: Executor<ContentSchema>, clean: Sanitized, fallbackLanguage: string): Promise<CleanDescription> {
  if (clean.html.trim() === '' || (clean.text === '' && !/<img\b/i.test(clean.html)))
    throw validationError('description must not be empty', [
      { path: 'description', code: 'too_small', message: 'the description has no content once sanitized' },
    ]);
  return {
    html: clean.html,
    text: clean.text,
    language: languageOf(clean.text, fallbackLanguage),
    mentions: await liveMentions(db, clean.mentions),
  };
}
