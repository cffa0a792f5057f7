import { type Bus, call } from '@kn/bus';
import { AppError, usersOperations } from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import express, { type NextFunction, type Request, type Response } from 'express';

export const SCIM_PATH = '/scim/v2';
const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** SCIM's own error shape (RFC 7644 §3.12), not the API's. */
function sendError(res: Response, status: number, detail: string, scimType?: string) {
  res
    .status(status)
    .type('application/scim+json')
    .send(JSON.stringify({ schemas: [SCIM_ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail }));
}

/**
 * SCIM 2.0 at /scim/v2 (docs/scim.md): the identity provider's provisioning of users and groups.
 * The gateway reads the body and the bearer token and hands the request to the users service,
 * which authenticates the provisioning token and answers in SCIM's terms.
 */
export function scimRoutes(options: {
  bus: Bus;
  logger: Logger;
  bodyLimit: string;
  rpcTimeoutMs: number;
  /** PUBLIC_URL: the origin of meta.location (else the request's). */
  publicUrl?: string;
}) {
  const router = express.Router();
  const publicOrigin = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).origin;
  router.use((_req, res, next) => {
    res.locals.route = SCIM_PATH;
    next();
  });
  router.use(express.json({ limit: options.bodyLimit, strict: true, type: ['application/scim+json', 'application/json'] }));
  router.use(async (req: Request, res: Response) => {
    if (!METHODS.has(req.method)) return sendError(res, 405, `${req.method} is not a SCIM method`);
    if (
      req.method !== 'GET' &&
      req.method !== 'DELETE' &&
      Number(req.get('content-length') ?? 0) > 0 &&
      !req.is(['application/scim+json', 'application/json'])
    )
      return sendError(res, 415, 'send the body as application/scim+json');
    const bearer = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(req.get('authorization') ?? '');
    if (!bearer) {
      res.set('WWW-Authenticate', 'Bearer');
      return sendError(res, 401, 'a SCIM provisioning token is needed (Authorization: Bearer <token>)');
    }
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') query[k] = v;
    try {
      const answer = await call(
        options.bus,
        'scim',
        usersOperations.scim,
        {
          actor: null,
          params: undefined,
          query: undefined,
          body: {
            token: bearer[1]!,
            method: req.method as 'GET',
            path: req.path,
            query,
            body: req.body ?? null,
            if_match: req.get('if-match') ?? null,
            base_url: `${publicOrigin ?? `${req.protocol}://${req.host}`}${SCIM_PATH}`,
          },
          requestId: req.id,
          url: req.originalUrl,
        },
        { timeoutMs: options.rpcTimeoutMs },
      );
      if (answer.status === 401) res.set('WWW-Authenticate', 'Bearer');
      if (answer.etag) res.set('ETag', answer.etag);
      if (answer.location) res.set('Location', answer.location);
      if (answer.body === null || answer.body === undefined) res.status(answer.status).end();
      else res.status(answer.status).type('application/scim+json').send(JSON.stringify(answer.body));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status >= 500) options.logger.error({ request_id: req.id, code: err.code, error_id: err.errorId }, err.message);
      sendError(res, err.status, err.message);
    }
  });
  // Bodies that are not JSON, or too large: SCIM's error shape too.
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed') return sendError(res, 400, 'the body is not valid JSON', 'invalidSyntax');
    if (type === 'entity.too.large') return sendError(res, 413, 'the request body is too large');
    if (type === 'encoding.unsupported' || type === 'charset.unsupported')
      return sendError(res, 415, 'unsupported body encoding or charset');
    options.logger.error({ err, request_id: req.id }, 'SCIM request failed');
    sendError(res, 500, 'internal error');
  });
  return router;
}
