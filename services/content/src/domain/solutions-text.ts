import { validationError } from '@kn/contracts';
import { detectLanguage } from '@kn/similarity';
import { sanitizeDescription } from './html.ts';
import type { Ex } from './solutions-common.ts';

export interface CleanDescription {
  html: string;
  text: string;
  language: string;
  /** Mentioned users that exist and are not deleted (per the users projection), in order of appearance. */
  mentions: number[];
}

/**
 * Sanitizes a solution or comment description (no script, no event handlers), detects its
 * language (falling back to the question's) and resolves the mentions. A description that is
 * empty once sanitized (for example only a script) is a validation error, like an empty one.
 */
export async function cleanDescription(ex: Ex, description: string, fallbackLanguage: string): Promise<CleanDescription> {
  const clean = sanitizeDescription(description);
  if (clean.html.trim() === '' || (clean.text === '' && !/<img\b/i.test(clean.html)))
    throw validationError('description must not be empty', [
      { path: 'description', code: 'too_small', message: 'the description has no content once sanitized' },
    ]);
  let mentions: number[] = [];
  if (clean.mentions.length) {
    const live = await ex
      .selectFrom('user_projection')
      .select('id')
      .where('id', 'in', clean.mentions)
      .where('is_deleted', '=', false)
      .execute();
    const ids = new Set(live.map((r) => r.id));
    mentions = clean.mentions.filter((id) => ids.has(id));
  }
  return { html: clean.html, text: clean.text, language: detectLanguage(clean.text, fallbackLanguage), mentions };
}
