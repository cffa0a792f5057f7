import type { contentOperations, Handlers } from '@kn/contracts';
import type { ContentDeps } from './deps.ts';
import { exportsHandlers } from './exports.ts';
import { importHandlers } from './import.ts';
import { questionHandlers } from './questions.ts';
import { similarHandlers } from './similar.ts';
import { solutionHandlers } from './solutions.ts';

export function createHandlers(deps: ContentDeps): Handlers<typeof contentOperations> {
  return {
    ...questionHandlers(deps),
    ...solutionHandlers(deps),
    ...importHandlers(deps),
    ...similarHandlers(deps),
    ...exportsHandlers(deps),
  };
}
