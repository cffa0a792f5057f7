import { z } from 'zod';

/** Operations on questions, categories, tags, tag links and knowledge spaces (content service). */
export const questionsOperations = {} as const;

/** Events `content.question.*`, `content.category.*`, `content.tag.*`, … */
export const questionsEvents = {} as const;

// Placeholder until the first schema lands; keeps the import used.
void z;
