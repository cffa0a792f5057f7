import type { exportsSourceOperations, Handlers } from '@kn/contracts';
import { exportsSourceDomain } from '../domain/exports.ts';
import type { ContentDeps } from './deps.ts';

/** Internal operations for the exports service: it asks, it never reads the content schema itself. */
export function exportsHandlers(deps: ContentDeps): Handlers<typeof exportsSourceOperations> {
  const source = exportsSourceDomain(deps);
  return {
    exportSourcePage: async ({ body }) => source.page(body),
    exportSourceText: async ({ body }) => source.text(body),
  };
}
