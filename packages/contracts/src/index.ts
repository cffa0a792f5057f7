export * from './common.ts';
export * from './endpoint.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './users.ts';

import type { Operation } from './endpoint.ts';
import { usersOperations } from './users.ts';

/** Every operation of the system, in the order the gateway registers routes (static paths first). */
export const operations = { ...usersOperations } satisfies Record<string, Operation>;
