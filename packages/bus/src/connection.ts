import { inboxPrefix, namespaced, type ServiceName, streams } from '@kn/contracts';
import { createMetrics, type Logger, type Metrics } from '@kn/telemetry';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, createInbox, type Msg, type MsgHdrs, type NatsConnection, nanos } from '@nats-io/transport-node';

export interface BusOptions {
  url: string;
  /** The NATS user of this process (a locked bus: infra/nats/), with its password. */
  user?: string;
  password?: string;
  /** Prefix for every subject and stream, so several systems (or test runs) share one NATS. */
  namespace?: string;
  /** Connection name, visible in NATS monitoring. */
  name: string;
  /** JetStream stream replicas: 1 on a developer machine, 3 on a cluster. */
  replicas?: number;
  logger: Logger;
  /** Where requests and consumers record what they do; a registry of its own when not given. */
  metrics?: Metrics;
}

export interface Bus {
  nc: NatsConnection;
  /**
   * A request and its one reply (`nc.request`'s contract: rejects with a timeout, or with "no
   * responders" when nobody serves the subject), over one inbox subscription of the connection.
   */
  request(subject: string, data: Uint8Array | string, options: { timeout: number; headers?: MsgHdrs }): Promise<Msg>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The subject as it is on the wire: `users.user.created.v1` → `<ns>.users.user.created.v1`. */
  subject(s: string): string;
  /** A subject on the wire back to its catalogue name. */
  unprefix(s: string): string;
  streamName(service: ServiceName): string;
  /** A key-value or object-store bucket's name with the namespace: `ratelimits` → `<ns>_ratelimits`. */
  bucketName(name: string): string;
  replicas: number;
  logger: Logger;
  metrics: Metrics;
  close(): Promise<void>;
}

export async function connectBus(options: BusOptions): Promise<Bus> {
  const nc = await connect({
    servers: options.url.split(',').map((u) => u.trim()),
    // A user of the locked bus receives replies on inboxes of its own, which no other user may read.
    ...(options.user ? { user: options.user, pass: options.password, inboxPrefix: inboxPrefix(options.user) } : {}),
    name: options.name,
    // Keep trying for ever: a NATS restart must not take the service down with it.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // Capturing a stack trace for every request costs more CPU than the request itself.
    noAsyncTraces: true,
  });
  batchWrites(nc);
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') options.logger.warn({ nats: status.type }, 'nats connection status');
    }
  })();
  const js = jetstream(nc);
  // JetStream may not answer yet (a cluster electing its leader): do not leave the connection behind.
  const jsm = await jetstreamManager(nc).catch(async (err) => {
    await nc.close();
    throw err;
  });
  return {
    nc,
    request: requester(nc, options.user ? inboxPrefix(options.user) : undefined),
    js,
    jsm,
    ...namespaced(options.namespace),
    replicas: options.replicas ?? 1,
    logger: options.logger,
    metrics: options.metrics ?? createMetrics(options.name),
    close: async () => {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}

/**
 * How every event stream keeps its events (docs/asyncapi.json says the same to subscribers):
 * events are the history projections are rebuilt from, so they are kept for ever, on disk; a
 * republished event (same id) within the duplicate window is dropped.
 */
export const EVENT_STREAM_RETENTION = {
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  maxAgeMs: 0,
  duplicateWindowMs: 2 * 60 * 1000,
} as const;

/**
 * The client writes what a task queued (publishes, requests, replies) at the end of that task, one
 * socket write each: under load every HTTP request of the gateway, every answer of a service,
 * costs a write of its own, and those writes were a quarter of the gateway's CPU. This moves the
 * write to the end of the event-loop turn (setImmediate): everything the turn queued goes out in
 * one write, a turn later at most. It replaces the scheduling in the client's `sendCommand` (the
 * same steps, @nats-io/nats-core 3.x) and leaves the client as it is when that is not what it finds.
 */
function batchWrites(nc: NatsConnection) {
  const protocol = (nc as unknown as { protocol?: Record<string, any> }).protocol;
  if (typeof protocol?.sendCommand !== 'function' || typeof protocol.flushPending !== 'function' || !protocol.outbound) return;
  const encoder = new TextEncoder();
  protocol.sendCommand = function sendCommand(this: Record<string, any>, cmd: string | Uint8Array, ...payloads: Uint8Array[]) {
    const queued = this.outbound.length();
    this.outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (queued === 0) setImmediate(() => this.flushPending());
    else if (this.outbound.size() >= this.pendingLimit) this.flushPending();
  };
}

/**
 * Requests over one wildcard inbox subscription, answered by token. The client's own `request` does
 * the same, but also builds an Error (a stack trace) for every request, answered or not: a few
 * percent of the gateway's CPU.
 */
function requester(nc: NatsConnection, prefix: string | undefined): Bus['request'] {
  const inbox = createInbox(prefix);
  const pending = new Map<string, { resolve(msg: Msg): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
  let next = 0;
  nc.subscribe(`${inbox}.*`, {
    callback: (_err, msg) => {
      const token = msg.subject.slice(inbox.length + 1);
      const waiting = pending.get(token);
      if (!waiting) return;
      pending.delete(token);
      clearTimeout(waiting.timer);
      // The server's answer when nobody serves the subject: a status without data.
      if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(new Error(`no responders: ${msg.subject}`));
      else waiting.resolve(msg);
    },
  });
  return (subject, data, options) =>
    new Promise<Msg>((resolve, reject) => {
      const token = (next++).toString(36);
      const timer = setTimeout(() => {
        pending.delete(token);
        reject(Object.assign(new Error(`timeout: no answer on ${subject}`), { name: 'TimeoutError' }));
      }, options.timeout);
      pending.set(token, { resolve, reject, timer });
      try {
        nc.publish(subject, data, { reply: `${inbox}.${token}`, headers: options.headers });
      } catch (err) {
        pending.delete(token);
        clearTimeout(timer);
        reject(err as Error);
      }
    });
}

/** Creates (or updates) the stream that holds a service's events. Called by the publishing service. */
export async function ensureStream(bus: Bus, service: ServiceName) {
  const name = bus.streamName(service);
  const config = {
    name,
    subjects: [bus.subject(streams[service].subjects)],
    retention: EVENT_STREAM_RETENTION.retention,
    storage: EVENT_STREAM_RETENTION.storage,
    num_replicas: bus.replicas,
    max_age: nanos(EVENT_STREAM_RETENTION.maxAgeMs),
    duplicate_window: nanos(EVENT_STREAM_RETENTION.duplicateWindowMs),
  };
  try {
    await bus.jsm.streams.info(name);
    await bus.jsm.streams.update(name, config);
  } catch (err) {
    if (!String((err as Error).message).includes('not found')) throw err;
    try {
      await bus.jsm.streams.add(config);
    } catch (addErr) {
      // Another instance created it between our look-up and our add.
      if (!String((addErr as Error).message).includes('already in use')) throw addErr;
    }
  }
}

/**
 * Removes everything of a namespace from the server: its streams with their consumers, and its
 * key-value and object-store buckets (streams named `KV_<name>` and `OBJ_<name>`). Answers the
 * names it removed. For test runs and benchmarks that share one NATS; never for the empty namespace.
 */
export async function dropNamespace(jsm: JetStreamManager, namespace: string): Promise<string[]> {
  if (!namespace) throw new Error('dropNamespace needs a namespace');
  const prefix = namespaced(namespace).bucketName('');
  const names: string[] = [];
  for await (const name of jsm.streams.names())
    if ([prefix, `KV_${prefix}`, `OBJ_${prefix}`].some((p) => name.startsWith(p))) names.push(name);
  const removed: string[] = [];
  const failed: Error[] = [];
  for (const name of names) {
    // A stream of a million messages can take the server longer to delete than a request waits:
    // the next attempt finds it gone. A failure does not leave the other streams behind.
    let error: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      error = await jsm.streams.delete(name).then(
        () => undefined,
        (err: Error) => (String(err.message).includes('not found') ? undefined : err),
      );
      if (!error) break;
    }
    if (error) failed.push(error);
    else removed.push(name);
  }
  if (failed.length) throw new AggregateError(failed, `could not remove every stream of namespace ${namespace}`);
  return removed;
}
