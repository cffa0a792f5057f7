export * from './analytics.ts';
export * from './answers.ts';
export * from './attachments.ts';
export * from './categories.ts';
export * from './chat.ts';
export * from './comments.ts';
export * from './common.ts';
export * from './endpoint.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './exports.ts';
export * from './exports-source.ts';
export * from './imports.ts';
export * from './knowledge-spaces.ts';
export * from './notifications.ts';
export * from './questions.ts';
export * from './search.ts';
export * from './sharing.ts';
export * from './solutions.ts';
export * from './tags.ts';
export * from './text.ts';
export * from './users.ts';

import { analyticsOperations } from './analytics.ts';
import { attachmentsOperations } from './attachments.ts';
import { categoriesOperations } from './categories.ts';
import { chatOperations } from './chat.ts';
import { commentsOperations } from './comments.ts';
import type { Operation } from './endpoint.ts';
import { exportsOperations } from './exports.ts';
import { exportsSourceOperations } from './exports-source.ts';
import { importOperations } from './imports.ts';
import { knowledgeSpacesOperations } from './knowledge-spaces.ts';
import { notificationsOperations } from './notifications.ts';
import { questionsOperations } from './questions.ts';
import { searchOperations, similarOperations } from './search.ts';
import { sharingOperations } from './sharing.ts';
import { solutionsOperations } from './solutions.ts';
import { tagsOperations } from './tags.ts';
import { usersOperations } from './users.ts';

export const contentOperations = {
  ...questionsOperations,
  ...categoriesOperations,
  ...tagsOperations,
  ...knowledgeSpacesOperations,
  ...solutionsOperations,
  ...commentsOperations,
  ...attachmentsOperations,
  ...sharingOperations,
  ...importOperations,
  ...similarOperations,
  ...exportsSourceOperations,
};

/** Every operation of the system, in the order the gateway registers routes (static paths first). */
export const operations = {
  ...usersOperations,
  ...contentOperations,
  ...notificationsOperations,
  ...searchOperations,
  ...exportsOperations,
  ...analyticsOperations,
  ...chatOperations,
} satisfies Record<string, Operation>;
