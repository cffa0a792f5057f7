import { z } from 'zod';

/** Operations on solutions, comments, attachments, forwards, shares and validation (content service). */
export const solutionsOperations = {} as const;

/** Events `content.solution.*`, `content.comment.*`, `content.attachment.*`, `content.forward.*`, `content.share.*`, … */
export const solutionsEvents = {} as const;

void z;
