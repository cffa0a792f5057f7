import type { Handlers, importOperations } from '@kn/contracts';
import { importDomain } from '../domain/import.ts';
import type { ContentDeps } from './deps.ts';

/** Internal operations of importers (docs/import.md); no http: only services and tools on the bus call them. */
export function importHandlers(deps: ContentDeps): Handlers<typeof importOperations> {
  const imports = importDomain(deps);
  return {
    importTags: async ({ body }) => imports.importTags(body.labels),
    importQuestions: async ({ body }) => imports.importQuestions(body.questions),
    importTagLinks: async ({ body }) => imports.importTagLinks(body.links),
    importQuestionLinks: async ({ body }) => imports.importQuestionLinks(body.links),
    listQuestionLinks: async ({ query }) => imports.listQuestionLinks(query),
    getQuestionLinks: async ({ actor, params }) => imports.questionLinks(actor, params.id),
  };
}
