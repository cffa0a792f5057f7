import { type Bus, connectBus, ensureStream, type OutboxRelay, type RequestKeys, requestKeys, startOutboxRelay } from '@kn/bus';
import type { ServiceName } from '@kn/contracts';
import type { Migration } from '@kn/db';
import { createDb, ensureDatabase, migrate } from '@kn/db';
import { createLogger, createMetrics, initTracing, type Logger, type Metrics, metricsServer, shutdownTracing } from '@kn/telemetry';
import { type Kysely, sql } from 'kysely';
import { z } from 'zod';
import { listen, listenUrl, natsProblem, postgresProblem, StartError, startSteps } from './start.ts';

export { internalRange, ipv6Words, isLocalhostName, outboundUrlProblem } from './addresses.ts';
export { type IntervalJob, intervalJob, lockedJob, type Stoppable, serviceParts } from './background.ts';
export { escapeHtml } from './html.ts';
export { listen, listenUrl, natsProblem, postgresProblem, StartError, startSteps } from './start.ts';

/**
 * Settings every service and the gateway share. Each service extends it with its own. Each
 * setting's description is its documentation: docs/operations.md is generated from the schemas
 * (`pnpm config-reference`).
 */
export const BaseConfig = z.object({
  DATABASE_URL: z
    .string()
    .refine((v) => URL.canParse(v) && /^postgres(ql)?:$/.test(new URL(v).protocol) && new URL(v).pathname.length > 1, {
      message: 'must be a postgres:// URL with a database name (postgres://user:password@host:5432/database)',
    })
    .default('postgres://postgres@127.0.0.1:5432/knowledge_network')
    .describe('The Postgres database; each service keeps its tables in a schema of its own name (created with the database when missing).'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10).describe('Connections this instance keeps to Postgres.'),
  NATS_URL: z
    .string()
    .refine((v) => v.split(',').every((u) => URL.canParse(u.trim()) && /^(nats|tls|ws|wss):$/.test(new URL(u.trim()).protocol)), {
      message: 'must be nats:// URLs, separated by commas (nats://host:4222)',
    })
    .default('nats://127.0.0.1:4222')
    .describe('NATS with JetStream; a comma-separated list for a cluster (`nats://n1:4222,nats://n2:4222,nats://n3:4222`).'),
  NATS_USER: z
    .string()
    .optional()
    .describe(
      'The NATS user this process connects as (with NATS_PASSWORD). A locked bus gives each service a user that may publish only its own subjects (infra/nats/).',
    ),
  NATS_PASSWORD: z.string().optional().describe("NATS_USER's password (from a secret: never in a file of the repository)."),
  START_RETRY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(60_000)
    .describe(
      'How long a starting process keeps trying Postgres and NATS while they refuse (still starting, full, unreachable) before it gives up with one line naming the setting.',
    ),
  NATS_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/)
    .default('')
    .describe('Prefix of every subject, stream and bucket; lets several systems (or test runs) share one NATS.'),
  NATS_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe(
      'JetStream replicas of the streams, consumers and buckets a process creates: 1 on a developer machine, 3 on a three-node cluster.',
    ),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Least severe log line written (JSON lines on stdout).'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url()
    .optional()
    .describe('An OTLP/HTTP collector (`http://collector:4318`) that receives the traces; unset: no traces are exported.'),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(9464)
    .describe(
      'Where `GET /metrics` (Prometheus) and `GET /healthz` listen; 0: any free port (logged). Instances on one host need their own.',
    ),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe(
      'The address `METRICS_PORT` listens on. Loopback by default: the metrics have no authentication, so only this machine reads them; `0.0.0.0` (all interfaces) when Prometheus scrapes from another host or container, behind a firewall or a network of its own.',
    ),
});
export type BaseConfig = z.infer<typeof BaseConfig>;

/**
 * `GET /metrics` and `GET /healthz` (healthy while the NATS connection is open) on METRICS_HOST
 * and METRICS_PORT; `url` is where this machine reads the metrics.
 */
export async function serveMetrics(metrics: Metrics, bus: Bus, config: Pick<BaseConfig, 'METRICS_HOST' | 'METRICS_PORT'>) {
  const server = await listen(
    metricsServer(metrics, () => !bus.nc.isClosed()),
    'METRICS_PORT',
    config.METRICS_PORT,
    config.METRICS_HOST,
  );
  return { server, url: `${listenUrl(server, config.METRICS_HOST)}/metrics` };
}

/**
 * Where a process takes the time from when time is the subject (token expiry, say): the system's
 * clock in production, a clock a test moves forward instead of waiting.
 */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** Parses configuration once, at start-up; nothing else reads process.env. A bad setting is a StartError naming it. */
export function parseConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const [first, ...more] = result.error.issues;
    const others = more.map((i) => `; ${i.path.join('.')}: ${i.message}`).join('');
    throw new StartError(first!.path.join('.'), `${first!.message}${others}`);
  }
  return result.data;
}

export interface Runtime<S> {
  service: ServiceName;
  db: Kysely<S>;
  bus: Bus;
  relay: OutboxRelay;
  /** Runs requests sent with an Idempotency-Key once (serveOperations takes it). */
  requestKeys: RequestKeys;
  logger: Logger;
  /** This instance's Prometheus metrics (services add their own gauges), served at `metricsUrl`. */
  metrics: Metrics;
  metricsUrl: string;
  /** Closes the relay, the connections and the metrics server; a second call returns the first's promise. */
  stop(): Promise<void>;
}

/**
 * What every service needs before it can serve: its database schema migrated, the bus
 * connected, its event stream present and its outbox relay running.
 */
export async function startRuntime<S>(options: {
  service: ServiceName;
  config: BaseConfig;
  migrations: Record<string, Migration>;
  logger?: Logger;
}): Promise<Runtime<S>> {
  const { service, config } = options;
  const logger = options.logger ?? createLogger(service, config.LOG_LEVEL);
  await initTracing(service, { otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const retried = startSteps(config, logger);
  // What started is closed again when a later step fails: a test that starts a service in its
  // own process must not keep its connections.
  const opened: Array<() => Promise<unknown>> = [];
  try {
    await retried('DATABASE_URL', postgresProblem, () => ensureDatabase(config.DATABASE_URL));
    const db = createDb<S>({
      url: config.DATABASE_URL,
      schema: service,
      poolSize: config.DATABASE_POOL_SIZE,
      onError: (err) => logger.warn({ err: err.message }, 'database connection lost'),
    });
    opened.push(() => db.destroy());
    await retried('DATABASE_URL', postgresProblem, () => migrate(db as Kysely<unknown>, service, options.migrations));
    const metrics = createMetrics(service);
    const bus = await retried('NATS_URL', natsProblem, () =>
      connectBus({
        url: config.NATS_URL,
        user: config.NATS_USER,
        password: config.NATS_PASSWORD,
        namespace: config.NATS_NAMESPACE,
        name: service,
        replicas: config.NATS_REPLICAS,
        logger,
        metrics,
      }),
    );
    opened.push(() => bus.close());
    await retried('NATS_URL', natsProblem, () => ensureStream(bus, service));
    metrics.gauge('kn_outbox_pending_events', 'Events written and not yet published to NATS: the outbox backlog', [], async (set) => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from outbox`.execute(db);
      set({}, rows[0]?.n ?? 0);
    });
    const { server, url: metricsUrl } = await serveMetrics(metrics, bus, config);
    logger.info({ metrics: metricsUrl }, 'metrics served');
    let stopping: Promise<void> | undefined;
    const runtime: Runtime<S> = {
      service,
      db,
      bus,
      relay: startOutboxRelay({ db: db as Kysely<unknown>, bus, databaseUrl: config.DATABASE_URL, schema: service }),
      requestKeys: requestKeys({
        db,
        databaseUrl: config.DATABASE_URL,
        schema: service,
        poolSize: config.DATABASE_POOL_SIZE,
        onError: (err) => logger.warn({ err: err.message }, 'idempotency key store'),
      }),
      logger,
      metrics,
      metricsUrl,
      stop: () => {
        // Every part is stopped even when one fails to (NATS already gone, say): nothing may keep
        // the process alive. The relay in force now: a test (or an operator tool) may have replaced it.
        stopping ??= (async () => {
          const results = await Promise.allSettled([
            runtime.relay.stop().then(() => bus.close()),
            runtime.requestKeys.stop(),
            new Promise<void>((resolve) => server.close(() => resolve())),
          ]);
          results.push(...(await Promise.allSettled([db.destroy()])));
          const failed = results.find((r) => r.status === 'rejected');
          if (failed) throw (failed as PromiseRejectedResult).reason;
        })();
        return stopping;
      },
    };
    return runtime;
  } catch (err) {
    for (const close of opened.reverse()) await close().catch(() => {});
    throw err;
  }
}

/** Runs a service as a process: starts it, and on SIGTERM or SIGINT drains and exits. */
export async function runMain(name: string, start: () => Promise<{ stop(): Promise<void> }>) {
  const logger = createLogger(name);
  let running: { stop(): Promise<void> };
  try {
    running = await start();
  } catch (err) {
    // A setting to fix (or a server that never came): one line that says which and why.
    if (err instanceof StartError) logger.fatal({ setting: err.setting }, `failed to start: ${err.message}`);
    else logger.fatal({ err }, 'failed to start');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await running.stop().catch((err) => logger.error({ err }, 'error while stopping'));
    await shutdownTracing();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
