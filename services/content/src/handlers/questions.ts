import type { Handlers, questionsOperations } from '@kn/contracts';
import type { ContentDeps } from './deps.ts';

export function questionHandlers(_deps: ContentDeps): Handlers<typeof questionsOperations> {
  return {};
}
