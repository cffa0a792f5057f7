import { randomFillSync } from 'node:crypto';
import { context, propagation, type Span, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { type Logger, pino } from 'pino';

export type { Logger };

/** Credentials never reach a log line, whatever object they sit in. */
const redact = {
  paths: [
    'password',
    'current_password',
    'token',
    'webhook_secret',
    '*.password',
    '*.current_password',
    '*.token',
    '*.webhook_secret',
    'req.headers.authorization',
    'headers.authorization',
    'authorization',
  ],
  censor: '[redacted]',
};

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, redact });
}

let provider: NodeTracerProvider | undefined;
let propagating = false;

/**
 * Registers the W3C trace-context propagator once per process, so an incoming `traceparent`
 * travels on through NATS whatever else is configured. Spans are recorded only when they go
 * somewhere (an OTLP endpoint, or a test's exporter): recording spans nobody reads costs CPU on
 * every request. The tracing SDK is loaded only then (13 MiB of every process's memory).
 */
export async function initTracing(serviceName: string, options: { otlpEndpoint?: string; exporter?: SpanExporter } = {}) {
  if (provider) return provider;
  if (!options.otlpEndpoint && !options.exporter) {
    if (!propagating) {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
      propagating = true;
    }
    return undefined;
  }
  if (propagating) {
    context.disable();
    propagation.disable();
    propagating = false;
  }
  const { startTracerProvider } = await import('./tracer-provider.ts');
  provider = startTracerProvider(serviceName, options);
  return provider;
}

export async function shutdownTracing() {
  await provider?.shutdown();
  provider = undefined;
}

export const tracer = () => trace.getTracer('knowledge-network');

/**
 * A context with a new trace of its own (random ids, not sampled): what a request that brought no
 * `traceparent`, or work no request started, goes on with when no tracer records spans. Every
 * message and event then carries a `traceparent`, so logs and subscribers can tie them together.
 */
function withNewTrace(ctx: ReturnType<typeof context.active>) {
  return trace.setSpanContext(ctx, { traceId: randomHex(32), spanId: randomHex(16), traceFlags: TraceFlags.NONE, isRemote: false });
}

/** Random bytes drawn a page at a time: one call of crypto's generator serves about a hundred traces. */
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;

/** Random lowercase hex of `length` digits (even), never all zeros (what W3C trace ids must be). */
function randomHex(length: number): string {
  const bytes = length / 2;
  if (randomAt + bytes > randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  const out = randomPool.toString('hex', randomAt, randomAt + bytes);
  randomAt += bytes;
  return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
}

/** Writes the active trace context into a header carrier (HTTP or NATS, through `set`); a new trace when there is none. */
export function injectTraceContext(set: (key: string, value: string) => void) {
  const active = context.active();
  const ctx = trace.getSpanContext(active) ? active : withNewTrace(active);
  propagation.inject(ctx, undefined, { set: (_carrier: unknown, k: string, v: string) => set(k, v) });
}

/** Runs `fn` in a span whose parent is the trace context read from incoming headers. */
export async function withRemoteSpan<T>(
  name: string,
  kind: SpanKind,
  get: (key: string) => string | undefined,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const extracted = propagation.extract(context.active(), undefined, {
    get: (_carrier: unknown, k: string) => get(k),
    keys: () => ['traceparent', 'tracestate'],
  });
  // No trace came along: a recording tracer starts one itself; without one, start it here.
  const parent = trace.getSpanContext(extracted) || provider ? extracted : withNewTrace(extracted);
  return tracer().startActiveSpan(name, { kind }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

export { createMetrics, type Metrics, metricsServer } from './metrics.ts';
export { context, SpanKind, trace };
