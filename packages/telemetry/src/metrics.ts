import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of one process (gateway or service instance), in a registry of its own
 * (tests run every service in one process), served at `GET /metrics` on METRICS_PORT. Names start
 * with `kn_`; `docs/operations.md` lists them.
 */
export interface Metrics {
  registry: Registry;
  /** Requests this process answered over NATS (`rpc.<service>.<operation>`). */
  rpcServer: { requests: Counter<'operation' | 'status'>; duration: Histogram<'operation'> };
  /** Requests this process sent to other services over NATS. */
  rpcClient: { requests: Counter<'service' | 'operation' | 'status'>; duration: Histogram<'service' | 'operation'> };
  /** Events a durable consumer of this process handled (`handled`, `duplicate`, `failed`, `rejected`). */
  events: Counter<'consumer' | 'outcome'>;
  /** Attempts to publish the outbox to NATS that failed (retried with backoff). */
  outboxFailures: Counter;
  /** HTTP requests (gateway). */
  http: { requests: Counter<'method' | 'route' | 'status'>; duration: Histogram<'method' | 'route'> };
  /**
   * A gauge read when Prometheus scrapes: `collect` sets its values. Several parts of a process
   * may add collectors to the same gauge (every consumer to the consumer lag, say).
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labels: readonly L[],
    collect: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void,
  ): void;
}

/** Latency buckets in seconds: from a cached read to a slow export page. */
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(process: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ process });
  collectDefaultMetrics({ register: registry, prefix: 'kn_' });
  const registers = [registry];
  type Collect = (set: (labels: Record<string, string>, value: number) => void) => Promise<void> | void;
  const collectors = new Map<string, Collect[]>();
  return {
    registry,
    rpcServer: {
      requests: new Counter({
        name: 'kn_rpc_server_requests_total',
        help: 'NATS requests answered, by operation and status (200, or the error status)',
        labelNames: ['operation', 'status'],
        registers,
      }),
      duration: new Histogram({
        name: 'kn_rpc_server_duration_seconds',
        help: 'Time to answer a NATS request',
        labelNames: ['operation'],
        buckets,
        registers,
      }),
    },
    rpcClient: {
      requests: new Counter({
        name: 'kn_rpc_client_requests_total',
        help: 'NATS requests sent to other services, by service, operation and status (503 when unanswered)',
        labelNames: ['service', 'operation', 'status'],
        registers,
      }),
      duration: new Histogram({
        name: 'kn_rpc_client_duration_seconds',
        help: 'Time until another service answered',
        labelNames: ['service', 'operation'],
        buckets,
        registers,
      }),
    },
    events: new Counter({
      name: 'kn_consumer_events_total',
      help: 'Events handled by a durable consumer of this process, by outcome (handled, duplicate, failed and retried, rejected)',
      labelNames: ['consumer', 'outcome'],
      registers,
    }),
    outboxFailures: new Counter({
      name: 'kn_outbox_publish_failures_total',
      help: 'Attempts to publish outbox events to NATS that failed (each is retried with backoff)',
      registers,
    }),
    http: {
      requests: new Counter({
        name: 'kn_http_requests_total',
        help: 'HTTP requests, by method, route (path template) and status',
        labelNames: ['method', 'route', 'status'],
        registers,
      }),
      duration: new Histogram({
        name: 'kn_http_request_duration_seconds',
        help: 'Time to answer an HTTP request',
        labelNames: ['method', 'route'],
        buckets,
        registers,
      }),
    },
    gauge(name, help, labelNames, collect) {
      const existing = collectors.get(name);
      if (existing) {
        existing.push(collect as Collect);
        return;
      }
      const list: Collect[] = [collect as Collect];
      collectors.set(name, list);
      new Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers,
        async collect() {
          this.reset();
          // A source that cannot answer (database away, say) leaves its values out, not the scrape.
          await Promise.all(list.map((c) => Promise.resolve(c((labels, value) => this.set(labels as never, value))).catch(() => {})));
        },
      });
    },
  };
}

/**
 * The server of `GET /metrics` and `GET /healthz` (200 while `healthy()`, else 503: what a
 * container's health check or an orchestrator's liveness probe asks); the caller listens.
 */
export function metricsServer(metrics: Metrics, healthy: () => boolean): Server {
  return createServer(async (req, res) => {
    const path = req.method === 'GET' ? req.url?.split('?')[0] : undefined;
    if (path === '/healthz') {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'unhealthy' }));
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}`);
    }
  });
}
