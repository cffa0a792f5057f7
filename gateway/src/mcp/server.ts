import { randomUUID } from 'node:crypto';
import type { Bus } from '@kn/bus';
import { type Actor, AppError, methodNotAllowed } from '@kn/contracts';
import type { Clock } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type Request, type Response, Router } from 'express';
import { jsonBody } from '../request.ts';
import { MCP_PATH, mcpCaller, type ResourceOptions } from './auth.ts';
import { invoker } from './invoke.ts';
import { registerResources } from './resources.ts';
import { registerTools } from './tools.ts';

export { MCP_PATH } from './auth.ts';

const INSTRUCTIONS =
  "The company's knowledge network: questions and their solutions written by colleagues. Search it (search_questions, answer_from_knowledge) before answering from general knowledge, and cite the links. When it has no answer, draft_question and publish_question ask the colleagues who know.";

/**
 * The MCP server at /mcp (Streamable HTTP, stateless): each POST is answered by a server made for
 * its caller, so that any gateway instance can answer any request and nothing is kept between them.
 * Every tool is done as the caller through the services (invoke.ts).
 */
export function mcpRoutes(options: {
  bus: Bus;
  logger: Logger;
  clock: Clock;
  bodyLimit: string;
  rpcTimeoutMs: number;
  resource: ResourceOptions;
  authenticate: (req: Request, requestId: string) => Promise<Actor>;
  /** The person of an access token of the gateway's own authorization server (undefined: not one of its tokens). */
  accessToken?: (req: Request, token: string) => Promise<Actor | undefined>;
  /** Counts one more operation against the caller's rate limit (429 beyond it). */
  count: (res: Response, actor: Actor) => Promise<void>;
}) {
  const { logger, accessToken } = options;
  const router = Router();
  // An access token issued for /mcp (by the single sign-on provider, or by the gateway), else the API's own
  // bearer token; each counts against the caller's limit. 8 KiB: a provider's JWT with many groups in it is long.
  const authenticate = async (req: Request, requestId: string) => {
    const token = /^Bearer\s+(\S{1,8192})\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    const actor = token && accessToken ? await accessToken(req, token) : undefined;
    if (!actor) return options.authenticate(req, requestId);
    await options.count(req.res!, actor);
    return actor;
  };
  router.use(MCP_PATH, (_req, res, next) => {
    res.locals.route = MCP_PATH;
    next();
  });
  router.post(MCP_PATH, jsonBody(options.bodyLimit), async (req, res) => {
    const actor = await mcpCaller(req, options.resource.origin, authenticate);
    const internal = (err: unknown) => {
      const errorId = randomUUID();
      logger.error({ err, request_id: req.id, error_id: errorId }, 'MCP request failed');
      return new AppError(500, 'InternalError', `internal error (${errorId})`, { errorId });
    };
    const origin = options.resource.origin(req);
    const server = new McpServer({ name: 'knowledge-network', version: '1.0.0' }, { instructions: INSTRUCTIONS });
    const invoke = invoker({
      bus: options.bus,
      actor,
      requestId: req.id,
      rpcTimeoutMs: options.rpcTimeoutMs,
      count: () => options.count(res, actor),
    });
    const tools = registerTools(server, { invoke, internal, link: (path) => `${origin}${path}`, now: () => options.clock.now() });
    registerResources(server, tools, internal);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no stream to open with GET, no session to end with DELETE. Authentication first, as everywhere.
  router.all(MCP_PATH, async (req) => {
    await mcpCaller(req, options.resource.origin, authenticate);
    throw methodNotAllowed(req.method, 'POST');
  });
  return router;
}
