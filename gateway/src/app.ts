import { randomUUID } from 'node:crypto';
import { type Bus, callJson } from '@kn/bus';
import {
  AppError,
  invalidJson,
  notFound,
  type Operation,
  operations,
  payloadTooLarge,
  rpcSubject,
  type ServiceName,
  unsupportedMediaType,
} from '@kn/contracts';
import { type Logger, SpanKind, withRemoteSpan } from '@kn/telemetry';
import express, { type NextFunction, type Request, type Response } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { authenticator } from './auth.ts';
import type { GatewayConfig } from './config.ts';
import { fileRoutes } from './files.ts';
import { docsPage, openApiDocument } from './openapi.ts';
import { authorize, parsePart } from './request.ts';

export const BASE = '/api/v1';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  namespace Express {
    interface Request {
      id: string;
    }
  }
}

const hasBody = (req: Request) => Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;

export function createApp(options: { bus: Bus; config: GatewayConfig; logger: Logger }) {
  const { bus, config, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', true);

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
  app.get(`${BASE}/docs`, (_req, res) => {
    res.type('html').send(docsPage(`${BASE}/openapi.json`));
  });
  app.use(`${BASE}/docs/assets`, express.static(getAbsoluteFSPath(), { index: false }));

  const auth = authenticator(bus, { ttlMs: config.AUTH_CACHE_MS });
  const json = express.json({ limit: config.BODY_LIMIT, strict: true });
  const router = express.Router();
  const files = fileRoutes({
    bus,
    logger,
    maxBytes: config.ATTACHMENT_MAX_BYTES,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    authenticate: (req, requestId) => auth.authenticate(req, requestId),
  });
  for (const [name, op] of Object.entries(operations) as Array<[string, Operation]>) {
    if (!op.http) continue;
    const { http } = op;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](http.path, (_req, res, next) => {
      res.locals.route = `${BASE}${http.path}`;
      next();
    });
    if (http.upload || http.download) {
      // Multipart upload and binary download stream through files.ts instead of JSON.
      router[method](http.path, files.handler(name, op));
      continue;
    }
    router[method](http.path, json, async (req: Request, res: Response) => {
      await withRemoteSpan(
        `${http.method} ${BASE}${http.path}`,
        SpanKind.SERVER,
        (k) => req.get(k),
        async (span) => {
          span.setAttribute('http.request_id', req.id);
          const actor = await authorize(auth.authenticate, req, op);
          const params = parsePart(op.params, req.params, 'params');
          const query = parsePart(op.query, req.query, 'query');
          let body: unknown;
          if (op.body) {
            if (hasBody(req) && !req.is('application/json')) throw unsupportedMediaType();
            body = parsePart(op.body, req.body === undefined ? {} : req.body, 'body');
          }
          const result = await callJson(bus, name, op, { actor, params, query, body, requestId: req.id, url: req.originalUrl } as never, {
            timeoutMs: config.RPC_TIMEOUT_MS,
          });
          if (result === null) res.status(http.status ?? 204).end();
          else
            res
              .status(http.status ?? 200)
              .type('json')
              .send(result);
        },
      );
    });
  }
  app.use(BASE, router);

  app.use((_req, _res, next) => next(notFound('endpoint')));

  // express recognises an error handler by its four parameters.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = toAppError(err, req, logger);
    if (error.headers) for (const [k, v] of Object.entries(error.headers)) res.setHeader(k, v);
    res.status(error.status).json(error.toBody());
  });
  return app;
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
  const errorId = randomUUID();
  logger.error({ err, request_id: req.id, error_id: errorId }, 'unhandled error');
  return new AppError(500, 'InternalError', 'internal error', { errorId });
}
