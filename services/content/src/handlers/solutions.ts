import type { Handlers, solutionsOperations } from '@kn/contracts';
import type { ContentDeps } from './deps.ts';

export function solutionHandlers(_deps: ContentDeps): Handlers<typeof solutionsOperations> {
  return {};
}
