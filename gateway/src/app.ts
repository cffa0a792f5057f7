import { hash, randomUUID } from 'node:crypto';
import { type Bus, callJson } from '@kn/bus';
import {
  type Actor,
  AppError,
  invalidJson,
  notFound,
  type Operation,
  operations,
  payloadTooLarge,
  rateLimited,
  rpcSubject,
  type ServiceName,
  unsupportedMediaType,
  validationError,
} from '@kn/contracts';
import type { Clock } from '@kn/service';
import { type Logger, SpanKind, withRemoteSpan } from '@kn/telemetry';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { asyncApiDocument } from './asyncapi.ts';
import { authenticator } from './auth.ts';
import { sendJson } from './compress.ts';
import { type GatewayConfig, trustProxy } from './config.ts';
import { docsRoutes } from './docs.ts';
import { fileRoutes } from './files.ts';
import { securityHeaders } from './headers.ts';
import { INTEGRATIONS_PATH, integrationRoutes } from './integrations.ts';
import { clientAddress, idempotency, loginThrottle, networkLimits, rateLimiter, rateLimitHeaders } from './limits.ts';
import { authorizationServersOf, MCP_PATH, resourceMetadataRoutes } from './mcp/auth.ts';
import { mcpCors } from './mcp/cors.ts';
import { authorizationServer, issuerOf, OAUTH_PATH } from './mcp/oauth.ts';
import { providerTokens } from './mcp/provider-tokens.ts';
import { mcpRoutes } from './mcp/server.ts';
import { OIDC_PATH, oidcRoutes } from './oidc.ts';
import { openApiDocument } from './openapi.ts';
import { authorize, jsonBody, parsePart, requireJson } from './request.ts';
import { type Route, routeTable } from './routes.ts';
import { SAML_PATH, samlRoutes } from './saml.ts';
import { SCIM_PATH, scimRoutes } from './scim.ts';
import { sessionCookie, sessionRoutes } from './session.ts';
import { webRoutes } from './web.ts';

export const BASE = '/api/v1';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  namespace Express {
    interface Request {
      id: string;
    }
  }
}

export function createApp(options: { bus: Bus; config: GatewayConfig; logger: Logger; clock: Clock }) {
  const { bus, config, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Which X-Forwarded-For entries name the client (req.ip): the log-in limit is per client address.
  app.set('trust proxy', trustProxy(config.TRUST_PROXY));

  const httpMetrics = bus.metrics.http;
  app.use((req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      // The route's template (`/questions/:id`), not the path: one series per endpoint.
      const route = (res.locals.route as string | undefined) ?? 'unmatched';
      const labels = { method: req.method, route };
      httpMetrics.requests.inc({ ...labels, status: String(res.statusCode) });
      httpMetrics.duration.observe(labels, (performance.now() - started) / 1000);
    });
    const incoming = req.get('x-request-id');
    req.id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  });
  app.use(securityHeaders);

  app.get(['/healthz', `${BASE}/healthz`], (_req, res) => {
    res.json({ status: 'ok' });
  });
  const services = [...new Set(Object.values(operations).map((op) => op.service))] as ServiceName[];
  app.get(['/readyz', `${BASE}/readyz`], async (_req, res) => {
    const checks = await Promise.all(
      services.map(async (service) => {
        try {
          const msg = await bus.nc.request(bus.subject(rpcSubject(service, 'health')), '', { timeout: 2000 });
          return [service, msg.json<{ ready: boolean }>().ready] as const;
        } catch {
          return [service, false] as const;
        }
      }),
    );
    const ready = !bus.nc.isClosed() && checks.every(([, ok]) => ok);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', services: Object.fromEntries(checks) });
  });

  const spec = openApiDocument(BASE);
  app.get(`${BASE}/openapi.json`, (_req, res) => {
    res.json(spec);
  });
  const events = asyncApiDocument();
  app.get(`${BASE}/asyncapi.json`, (_req, res) => {
    res.json(events);
  });
  app.use(docsRoutes(BASE));

  const cookie = sessionCookie({ publicUrl: config.PUBLIC_URL });
  const auth = authenticator(bus, { ttlMs: config.AUTH_CACHE_MS, clock: options.clock, sessionOf: cookie.sessionOf });
  const limits = networkLimits(bus);
  const takeRate = rateLimiter(bus, { clock: options.clock });
  const loginAttempt = loginThrottle(takeRate);
  const keys = idempotency(bus, { inFlightMs: 2 * config.RPC_TIMEOUT_MS, waitMs: config.RPC_TIMEOUT_MS });
  /** Counts a request against a limit: RateLimit-* headers on the answer, 429 RateLimited beyond it. */
  const limit = async (res: Response, name: string, perMinute: number) => {
    const decision = await takeRate(name, perMinute);
    if (!decision) return;
    res.set(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision.retryAfter);
  };
  const countToken = (res: Response, actor: Actor) => limit(res, `token:${actor.token_id ?? actor.id}`, limits.get().rate_limit_per_minute);
  // Every authenticated request counts against its token's limit.
  const authenticate = async (req: Request, requestId: string) => {
    const actor = await auth.authenticate(req, requestId);
    await countToken(req.res!, actor);
    return actor;
  };
  app.use(
    '/session',
    sessionRoutes({
      bus,
      cookie,
      authenticate,
      loginAttempt: (req, email, setHeaders) =>
        loginAttempt(clientAddress(req.ip), email, limits.get().login_attempts_per_minute, setHeaders),
    }),
  );
  // Starts of single sign-on (OpenID Connect and SAML together) are limited per client address as log-ins are.
  const signInStarts = (req: Request, res: Response) => limit(res, `oidc:${clientAddress(req.ip)}`, limits.get().login_attempts_per_minute);
  for (const [path, routes] of [
    [OIDC_PATH, oidcRoutes],
    [SAML_PATH, samlRoutes],
  ] as const)
    app.use(path, routes({ bus, config, cookie, logger, throttle: signInStarts }));
  app.use(
    SCIM_PATH,
    scimRoutes({ bus, logger, bodyLimit: config.BODY_LIMIT, rpcTimeoutMs: config.RPC_TIMEOUT_MS, publicUrl: config.PUBLIC_URL }),
  );
  // The MCP server for AI assistants (docs/mcp.md): the same operations, as the same caller. The
  // gateway is an authorization server for it; people sign in there as on the web app (single sign-on too).
  const oauth = authorizationServer({
    bus,
    logger,
    cookie,
    authenticate,
    now: () => options.clock.now().getTime(),
    trustProxy: config.TRUST_PROXY !== 'false',
  });
  // With single sign-on the company's provider is an authorization server too (docs/mcp.md): its access tokens are accepted.
  const company = config.OIDC_ISSUER;
  const providerToken = company
    ? providerTokens({
        bus,
        logger,
        clock: options.clock,
        issuer: company,
        audience: config.OIDC_MCP_AUDIENCE,
        trustVerifiedEmail: config.OIDC_LINK_VERIFIED_EMAIL === 'true',
        timeoutMs: config.RPC_TIMEOUT_MS,
      })
    : undefined;
  const resource = {
    origin: cookie.origin,
    authorizationServers: (req: Request) => authorizationServersOf(issuerOf(cookie.origin(req)), company, config.OIDC_MCP_FIRST),
  };
  app.use(
    [
      MCP_PATH,
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      `${OAUTH_PATH}/.well-known`,
      `${OAUTH_PATH}/reg`,
    ],
    mcpCors,
  );
  app.use(resourceMetadataRoutes(resource));
  app.use(oauth.router);
  app.use(
    mcpRoutes({
      bus,
      logger,
      clock: options.clock,
      bodyLimit: config.BODY_LIMIT,
      rpcTimeoutMs: config.RPC_TIMEOUT_MS,
      resource,
      authenticate,
      accessToken: async (req, token) =>
        (await providerToken?.(req, token, `${cookie.origin(req)}${MCP_PATH}`)) ?? oauth.actorOf(req, token),
      count: countToken,
    }),
  );
  app.use(INTEGRATIONS_PATH, integrationRoutes({ bus, rpcTimeoutMs: config.RPC_TIMEOUT_MS }));
  const json = jsonBody(config.BODY_LIMIT);
  const routes: Route[] = [];
  const files = fileRoutes({
    bus,
    logger,
    maxBytes: config.ATTACHMENT_MAX_BYTES,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    authenticate,
  });
  for (const [name, op] of Object.entries(operations) as Array<[string, Operation]>) {
    if (!op.http) continue;
    const { http } = op;
    const named: RequestHandler = (_req, res, next) => {
      res.locals.route = `${BASE}${http.path}`;
      next();
    };
    if (http.upload || http.download) {
      // Multipart upload and binary download stream through files.ts instead of JSON.
      routes.push({ method: http.method, path: http.path, handlers: [named, files.handler(name, op)] });
      continue;
    }
    // An operation that takes no body ignores one: it cannot fail on what it never reads.
    const parsers = op.body ? [json] : [];
    routes.push({
      method: http.method,
      path: http.path,
      handlers: [
        named,
        ...parsers,
        async (req: Request, res: Response) => {
          await withRemoteSpan(
            `${http.method} ${BASE}${http.path}`,
            SpanKind.SERVER,
            (k) => req.get(k),
            async (span) => {
              span.setAttribute('http.request_id', req.id);
              const actor = await authorize(authenticate, req, op);
              const params = parsePart(op.params, req.params, 'params');
              const query = parsePart(op.query, req.query, 'query');
              let body: unknown;
              if (op.body) {
                requireJson(req);
                body = parsePart(op.body, req.body === undefined ? {} : req.body, 'body');
              }
              // Logging in is limited per client address and per email address (loginThrottle), everything else per token.
              const login =
                name === 'login'
                  ? await loginAttempt(
                      clientAddress(req.ip),
                      (body as { email: string }).email.trim().toLowerCase(),
                      limits.get().login_attempts_per_minute,
                      (headers) => res.set(headers),
                    )
                  : undefined;
              const send = (status: number, json: string | null) => {
                if (json === null) res.status(status === 200 ? (http.status ?? 204) : status).end();
                else sendJson(req, res, status, json);
              };
              const key = http.method === 'POST' ? idempotencyKey(req) : undefined;
              const scope = `${actor?.id ?? 'public'} ${http.method} ${http.path}`;
              // The service records the key with its change, so that a retry after a lost answer changes nothing.
              const requestKey = key === undefined ? undefined : hash('sha256', `${scope}\n${key}`);
              const call = () =>
                callJson(bus, name, op, { actor, params, query, body, requestId: req.id, url: req.originalUrl, requestKey } as never, {
                  timeoutMs: Math.max(config.RPC_TIMEOUT_MS, http.timeoutMs ?? 0),
                });
              const run = login ? () => login.check(call) : call;
              if (key === undefined) {
                send(http.status ?? 200, await run());
                return;
              }
              const claim = await keys.begin(scope, key, { url: req.originalUrl, body });
              if (claim.replay) {
                res.set('Idempotent-Replayed', 'true');
                send(claim.replay.status, claim.replay.body);
                return;
              }
              let status: number;
              let answer: string | null;
              try {
                answer = await run();
                status = http.status ?? 200;
              } catch (err) {
                // A client error is the answer to keep; anything else frees the key for another try.
                await (err instanceof AppError ? claim.finish(err.status, JSON.stringify(err.toBody())) : claim.finish(500, null));
                throw err;
              }
              await claim.finish(status, answer);
              send(status, answer);
            },
          );
        },
      ],
    });
  }
  app.use(BASE, routeTable(routes));
  app.use(webRoutes(config.WEB_ROOT, logger));

  app.use((_req, _res, next) => next(notFound('endpoint')));

  // express recognises an error handler by its four parameters.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = toAppError(err, req, logger);
    if (error.headers) for (const [k, v] of Object.entries(error.headers)) res.setHeader(k, v);
    res.status(error.status).json(error.toBody());
  });
  return {
    app,
    /** Stops what the app runs beside requests (the limits' refresh, the revocation subscription). */
    async stop() {
      auth.stop();
      await limits.stop();
    },
  };
}

/** The Idempotency-Key header: up to 255 visible ASCII characters; undefined when not sent. */
function idempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw validationError('Idempotency-Key must be 1 to 255 visible ASCII characters', [
      { path: 'Idempotency-Key', code: 'invalid_format', message: '1 to 255 visible ASCII characters' },
    ]);
  return key;
}

/** Maps anything thrown while handling a request to the contract's error. */
function toAppError(err: unknown, req: Request, logger: Logger): AppError {
  if (err instanceof AppError) {
    if (err.status >= 500) logger.error({ request_id: req.id, code: err.code, error_id: err.errorId }, err.message);
    return err;
  }
  const type = (err as { type?: string }).type;
  if (type === 'entity.parse.failed') return invalidJson();
  if (type === 'entity.too.large') return payloadTooLarge('the request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return unsupportedMediaType('unsupported body encoding or charset');
  if (type === 'request.aborted') return new AppError(400, 'ValidationError', 'request aborted');
  // The router cannot percent-decode a path parameter (`%ED%A0%80` is not UTF-8): the URL is the client's fault.
  if (err instanceof URIError && (err as { status?: number }).status === 400)
    return validationError('a path parameter is not valid percent-encoded UTF-8', [
      { path: 'params', code: 'invalid_format', message: 'not valid percent-encoded UTF-8' },
    ]);
  const errorId = randomUUID();
  logger.error({ err, request_id: req.id, error_id: errorId }, 'unhandled error');
  return new AppError(500, 'InternalError', 'internal error', { errorId });
}
