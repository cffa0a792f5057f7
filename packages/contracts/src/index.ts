export * from './common.ts';
export * from './endpoint.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './imports.ts';
export * from './notifications.ts';
export * from './questions.ts';
export * from './solutions.ts';
export * from './users.ts';

import type { Operation } from './endpoint.ts';
import { importOperations } from './imports.ts';
import { notificationsOperations } from './notifications.ts';
import { questionsOperations } from './questions.ts';
import { solutionsOperations } from './solutions.ts';
import { usersOperations } from './users.ts';

export const contentOperations = { ...questionsOperations, ...solutionsOperations, ...importOperations };

/** Every operation of the system, in the order the gateway registers routes (static paths first). */
export const operations = { ...usersOperations, ...contentOperations, ...notificationsOperations } satisfies Record<string, Operation>;
