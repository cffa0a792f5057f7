import { randomUUID } from 'node:crypto';
import {
  AppError,
  type ErrorBody,
  fieldErrors,
  type Handlers,
  JsonAnswer,
  type Operation,
  type OperationRequest,
  type OperationResult,
  rpcSubject,
  type ServiceName,
  serviceUnavailable,
} from '@kn/contracts';
import { deadlineLeft, QUERY_CANCELED, withDeadline } from '@kn/db';
import { injectTraceContext, SpanKind, withRemoteSpan } from '@kn/telemetry';
import { type Msg, headers as natsHeaders, type Subscription } from '@nats-io/transport-node';
import type { Bus } from './connection.ts';
import { incomingBody, outgoingBody } from './large-payloads.ts';
import type { RequestKeys } from './request-keys.ts';

/**
 * A reply carries its status in this header: 200 with the response body as JSON (nothing for no
 * body), or the error's status with `ErrorReply` as JSON. The gateway can then pass a body on to
 * the client as it came, without parsing and serializing it again.
 */
const STATUS_HEADER = 'Kn-Status';
/**
 * How long the caller waits for the answer (ms). The service serves the request under that
 * deadline (`withDeadline` of @kn/db): its statements and its own calls stop when the caller has
 * given up, instead of running on for an answer nobody reads.
 */
const TIMEOUT_HEADER = 'Kn-Timeout-Ms';
type ErrorReply = { error: ErrorBody; headers?: Record<string, string> };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Serves a service's operations over NATS request/reply. All instances of the service subscribe
 * in one queue group, so NATS gives each request to one of them.
 */
export function serveOperations<C extends Record<string, Operation>>(options: {
  bus: Bus;
  service: ServiceName;
  operations: C;
  handlers: Handlers<C>;
  /** Readiness beyond "process up", for example "search index loaded". */
  ready?: () => boolean;
  /** Requests with a key run once, and a retry gets the kept answer (request-keys.ts). */
  requestKeys?: RequestKeys;
}): { stop(): Promise<void> } {
  const { bus, service } = options;
  const log = bus.logger.child({ component: 'rpc' });
  const subscriptions: Subscription[] = [];
  const inFlight = new Set<Promise<void>>();

  for (const [name, op] of Object.entries(options.operations)) {
    const handler = (options.handlers as Record<string, (r: OperationRequest<Operation>) => Promise<unknown>>)[name];
    const subject = bus.subject(rpcSubject(service, name));
    const sub = bus.nc.subscribe(subject, {
      queue: service,
      callback: (err, msg) => {
        if (err) return log.error({ err }, 'subscription error');
        const work = answer(name, op, handler, msg).finally(() => inFlight.delete(work));
        inFlight.add(work);
      },
    });
    subscriptions.push(sub);
  }
  subscriptions.push(
    bus.nc.subscribe(bus.subject(rpcSubject(service, 'health')), {
      queue: service,
      callback: (_err, msg) => {
        msg.respond(JSON.stringify({ service, ready: options.ready?.() ?? true }));
      },
    }),
  );

  const { rpcServer } = bus.metrics;
  async function answer(name: string, op: Operation, handler: (r: OperationRequest<Operation>) => Promise<unknown>, msg: Msg) {
    const started = performance.now();
    const timeoutMs = Number(msg.headers?.get(TIMEOUT_HEADER));
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
    const reply = await withRemoteSpan(
      `rpc ${service}.${name}`,
      SpanKind.SERVER,
      (k) => msg.headers?.get(k) || undefined,
      async () => {
        let request: OperationRequest<Operation> | undefined;
        try {
          request = JSON.parse(decoder.decode(await incomingBody(bus, service, 'requests', msg))) as OperationRequest<Operation>;
          // Calls from the gateway were validated there; internal calls are validated here.
          if (!op.http && op.body) {
            const parsed = op.body.safeParse(request.body);
            if (!parsed.success)
              throw new AppError(400, 'ValidationError', 'invalid request', { errors: fieldErrors(parsed.error.issues, 'body') });
            request.body = parsed.data;
          }
          const run = async () => {
            const body = await handler(request!);
            if (body instanceof JsonAnswer) return body.json;
            return body === undefined ? '' : JSON.stringify(body);
          };
          const key = options.requestKeys ? request.requestKey : undefined;
          const served = () => (key === undefined ? run() : options.requestKeys!.once(key, run));
          return { status: 200, data: deadline === undefined ? await served() : await withDeadline(deadline, served) };
        } catch (err) {
          return errorReply(err, { operation: `${service}.${name}`, requestId: request?.requestId });
        }
      },
    );
    const h = natsHeaders();
    let { status } = reply;
    let data: Uint8Array;
    try {
      data = await outgoingBody(bus, service, 'replies', encoder.encode(reply.data), h);
    } catch (err) {
      // A large answer that could not be stored is still answered: the caller would wait in vain.
      const failed = errorReply(serviceUnavailable(`the answer could not be stored: ${(err as Error).message}`), {});
      status = failed.status;
      data = encoder.encode(failed.data);
    }
    h.set(STATUS_HEADER, String(status));
    msg.respond(data, { headers: h });
    rpcServer.requests.inc({ operation: name, status: String(status) });
    rpcServer.duration.observe({ operation: name }, (performance.now() - started) / 1000);
  }

  function errorReply(err: unknown, context: Record<string, unknown>): { status: number; data: string } {
    const reply = (status: number, body: ErrorReply) => ({ status, data: JSON.stringify(body) });
    if (err instanceof AppError) return reply(err.status, { error: err.toBody(), headers: err.headers });
    if ((err as { code?: string }).code === QUERY_CANCELED) {
      const unavailable = serviceUnavailable(`the ${service} service did not finish in time`);
      return reply(503, { error: unavailable.toBody(), headers: unavailable.headers });
    }
    const errorId = randomUUID();
    log.error({ err, error_id: errorId, ...context }, 'unhandled error');
    return reply(500, { error: { code: 'InternalError', message: 'internal error', error_id: errorId } });
  }

  return {
    stop: async () => {
      // Stop taking requests, then let the ones under way answer.
      await Promise.all(subscriptions.map((s) => s.drain()));
      await Promise.all(inFlight);
    },
  };
}

/** Calls an operation of another service (the gateway's and the services' only way to ask each other). */
export async function call<O extends Operation>(
  bus: Bus,
  name: string,
  op: O,
  request: OperationRequest<O>,
  options: { timeoutMs?: number } = {},
): Promise<OperationResult<O>> {
  const json = await callJson(bus, name, op, request, options);
  return (json === null ? undefined : JSON.parse(json)) as OperationResult<O>;
}

/**
 * `call`, answering the response body as the service wrote it (JSON text, null for no body): the
 * gateway passes it on without parsing it.
 */
export async function callJson<O extends Operation>(
  bus: Bus,
  name: string,
  op: O,
  request: OperationRequest<O>,
  options: { timeoutMs?: number } = {},
): Promise<string | null> {
  const h = natsHeaders();
  injectTraceContext((k, v) => h.set(k, v));
  h.set('x-request-id', request.requestId);
  const started = performance.now();
  const labels = { service: op.service, operation: name };
  const done = (status: number) => {
    bus.metrics.rpcClient.requests.inc({ ...labels, status: String(status) });
    bus.metrics.rpcClient.duration.observe(labels, (performance.now() - started) / 1000);
  };
  // Within a request being served, a call gets at most what is left of its deadline.
  const left = deadlineLeft();
  if (left !== undefined && left <= 0) {
    done(503);
    throw serviceUnavailable(`no time was left to ask the ${op.service} service`);
  }
  const timeout = Math.min(options.timeoutMs ?? 10_000, left ?? Number.POSITIVE_INFINITY);
  h.set(TIMEOUT_HEADER, String(Math.ceil(timeout)));
  let msg: Msg;
  try {
    const payload = await outgoingBody(bus, op.service, 'requests', encoder.encode(JSON.stringify(request)), h);
    msg = await bus.request(bus.subject(rpcSubject(op.service, name)), payload, {
      timeout,
      headers: h,
    });
  } catch (err) {
    done(503);
    const message = (err as Error).message ?? '';
    if (/no responders/i.test(message) || (err as { isNoResponders?: () => boolean }).isNoResponders?.())
      throw serviceUnavailable(`the ${op.service} service is not running`);
    if (/timeout/i.test(message) || (err as Error).name === 'TimeoutError')
      throw serviceUnavailable(`the ${op.service} service did not answer in time`);
    throw serviceUnavailable(`the ${op.service} service cannot be reached: ${message}`);
  }
  const status = Number(msg.headers?.get(STATUS_HEADER) ?? 0);
  done(status || 503);
  if (!status) throw serviceUnavailable(`the ${op.service} service answered without a status`);
  let body: Uint8Array;
  try {
    body = await incomingBody(bus, op.service, 'replies', msg);
  } catch (err) {
    throw serviceUnavailable(`the answer of the ${op.service} service could not be read: ${(err as Error).message}`);
  }
  if (status === 200) return body.length ? decoder.decode(body) : null;
  const reply = JSON.parse(decoder.decode(body)) as ErrorReply;
  throw new AppError(status, reply.error.code, reply.error.message, {
    errors: reply.error.errors,
    headers: reply.headers,
    errorId: reply.error.error_id,
  });
}

/** The request id for calls that do not come from an HTTP request (jobs, consumers). */
export const internalRequestId = () => `internal-${randomUUID()}`;
