import { AppError, Id } from '@kn/contracts';
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { registerTools } from './tools.ts';

/** The URI template of a question as a resource a client attaches as context. */
export const QUESTION_URI = 'kn://questions/{id}';

/** MCP's code for a resource that does not exist (the specification's -32002). */
const RESOURCE_NOT_FOUND = -32002;

/** Questions as resources: the text get_question answers, read as the caller (a question they may not see is not found). */
export function registerResources(server: McpServer, questions: ReturnType<typeof registerTools>, internal: (err: unknown) => AppError) {
  server.registerResource(
    'question',
    new ResourceTemplate(QUESTION_URI, { list: undefined }),
    {
      title: 'Question',
      description: 'A question of the network with its solutions and comments, as text (kn://questions/<id>).',
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      const id = Id.safeParse(variables.id);
      if (!id.success) throw new McpError(ErrorCode.InvalidParams, `${uri.href}: the question id must be a positive integer`);
      try {
        const { text } = questions.questionText(await questions.fetchQuestion(id.data));
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
      } catch (err) {
        const error = err instanceof AppError ? err : internal(err);
        if (error.status === 404) throw new McpError(RESOURCE_NOT_FOUND, `${uri.href}: ${error.message}`, { uri: uri.href });
        throw new McpError(error.status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, `${error.code}: ${error.message}`);
      }
    },
  );
}
