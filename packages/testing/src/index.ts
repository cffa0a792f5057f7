import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropNamespace } from '@kn/bus';
import { dropDatabase } from '@kn/db';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { testSettings } from './config.ts';

export { DEFAULT_TEST_DATABASE_URL } from './config.ts';

/**
 * A data set kept in the repository (`datasets/<name>`: the demo network `stackexchange-beer`),
 * looked for from the working directory up to the repository's root, so that a test run from a
 * package's folder finds it too. Nothing beside the repository is looked at.
 */
export function dataset(name: string): string {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const folder = path.join(dir, 'datasets', name);
    if (existsSync(folder)) return folder;
    if (existsSync(path.join(dir, 'pnpm-workspace.yaml')) || path.dirname(dir) === dir)
      throw new Error(`data set ${name} not found: it is datasets/${name} of the repository, looked for from ${process.cwd()}`);
  }
}

/** The namespaces and databases of a test run start with these. */
export const runPrefixes = (runId: string) => ({ namespace: `t${runId}`, database: `kn_t${runId}_` });

/** The NATS server (with JetStream) tests use: TEST_NATS_URL, or this machine's. */
export const testNatsUrl = testSettings.natsUrl;

/**
 * Everything a test file (or a benchmark) touches is its own: a database and a NATS namespace
 * (subjects, streams, consumers, buckets). `drop()` removes both; call it also when the file fails.
 */
export function isolation() {
  const id = randomBytes(4).toString('hex');
  const runId = testSettings.run();
  const { namespace: scope, database } = runId ? runPrefixes(runId) : { namespace: 'bench', database: 'kn_bench_' };
  const base = testSettings.databaseUrl();
  const url = new URL(base);
  url.pathname = `/${database}${id}`;
  const databaseUrl = url.toString();
  const namespace = `${scope}${id}`;
  return {
    id,
    databaseUrl,
    namespace,
    /** Drops the database and the namespace's streams and buckets from the NATS server at `natsUrl`. */
    async drop(natsUrl = testNatsUrl(), natsAuth?: NatsAuth) {
      const results = await Promise.allSettled([dropDatabase(databaseUrl), dropNatsNamespace(natsUrl, namespace, natsAuth)]);
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
  };
}

/** A user with the right to drop streams, on a locked NATS server. */
export type NatsAuth = { user: string; pass: string };

/** Removes a namespace's streams and buckets from a NATS server (see @kn/bus dropNamespace). */
export async function dropNatsNamespace(natsUrl: string, namespace: string, auth?: NatsAuth) {
  const nc = await connect({ servers: natsUrl.split(','), maxReconnectAttempts: 0, ...auth });
  try {
    return await dropNamespace(await jetstreamManager(nc), namespace);
  } finally {
    await nc.close();
  }
}

/**
 * Removes whatever a test run left on the NATS server and on Postgres (its namespaces' streams,
 * consumers and buckets, its databases) and answers what that was.
 */
export async function removeRun(runId: string, natsUrl = testNatsUrl()): Promise<string[]> {
  const { namespace, database } = runPrefixes(runId);
  const left: string[] = [];
  const nc = await connect({ servers: natsUrl.split(','), maxReconnectAttempts: 0 });
  try {
    const jsm = await jetstreamManager(nc);
    const streams: Array<{ name: string; consumers: number }> = [];
    for await (const s of jsm.streams.list())
      if ([namespace, `KV_${namespace}`, `OBJ_${namespace}`].some((p) => s.config.name.startsWith(p)))
        streams.push({ name: s.config.name, consumers: s.state.consumer_count });
    for (const s of streams) {
      await jsm.streams.delete(s.name);
      left.push(`NATS stream ${s.name} (${s.consumers} consumers)`);
    }
  } finally {
    await nc.close();
  }
  const admin = new URL(testSettings.databaseUrl());
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [database]);
    for (const { datname } of rows) {
      await client.query(`drop database if exists "${datname}" with (force)`);
      left.push(`Postgres database ${datname}`);
    }
  } finally {
    await client.end();
  }
  return left;
}

/** The first port the kernel hands to outgoing connections (and to `listen(0)`). */
const ephemeralPorts = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();

/**
 * A port nothing listens on now, below the ephemeral range: a port from `listen(0)` is often taken
 * by an outgoing connection before a server started later can bind it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (ephemeralPorts - 10_000));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/**
 * The one polling helper: `probe` until it gives a value, which it returns. A probe that throws is
 * tried again; past the deadline the error names `what` and the probe's last error.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
) {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value as T;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
  throw new Error(`timed out waiting for ${options.what ?? 'condition'}${last ? `: ${(last as Error).message}` : ''}`);
}

/** A clock for a system under test: real time plus however far the test has moved it (`advance`). */
export function testClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms: number) {
      offset += ms;
    },
  };
}

/** The samples of a metric on a process's Prometheus page: labels (as written, `{…}` or '') → value. */
export async function scrapeMetric(url: string, metric: string): Promise<Map<string, number>> {
  const res = await fetch(url);
  const type = res.headers.get('content-type') ?? '';
  if (res.status !== 200 || !type.startsWith('text/plain')) throw new Error(`${url} answered ${res.status} ${type}`);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = line.match(/^(\w+)(\{[^}]*\})? (\S+)$/);
    if (m && m[1] === metric) samples.set(m[2] ?? '', Number(m[3]));
  }
  return samples;
}

/** Whether something accepts connections on a local port. */
function listening(port: number) {
  return new Promise<boolean>((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A NATS server of the test's own (the machine's nats-server binary, JetStream on, file store in a
 * temporary folder), so a test can stop and restart it without disturbing anything else; with a
 * configuration file's text and the environment it reads (passwords), when given; `jetstream: false`
 * for a server the system must refuse.
 */
export async function startNatsServer(options: { config?: string; env?: Record<string, string>; jetstream?: boolean } = {}) {
  const port = await freePort();
  const storeDir = mkdtempSync(path.join(tmpdir(), 'kn-nats-'));
  const binary = testSettings.natsServerBinary();
  let child: ChildProcess | undefined;
  // A configuration of the test's own (authorization, say); the flags set address, port and store.
  const config = options.config === undefined ? [] : ['-c', path.join(storeDir, 'nats.conf')];
  if (options.config !== undefined) writeFileSync(path.join(storeDir, 'nats.conf'), options.config);

  async function up() {
    child = spawn(
      binary,
      [
        ...config,
        ...['-a', '127.0.0.1', '-p', String(port), '-l', path.join(storeDir, 'nats.log')],
        ...(options.jetstream === false ? [] : ['-js', '-sd', storeDir]),
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...testSettings.environment(), ...options.env },
      },
    );
    const started = child;
    let errors = '';
    started.stderr!.on('data', (c: Buffer) => {
      errors += c.toString();
    });
    await waitFor(
      () => {
        if (started.exitCode !== null) throw new Error(`nats-server exited (${started.exitCode}): ${errors.slice(-500)}`);
        return listening(port);
      },
      { what: `nats-server on port ${port}` },
    );
  }
  async function down(signal: NodeJS.Signals = 'SIGTERM') {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  }
  await up();
  return {
    url: `nats://127.0.0.1:${port}`,
    /** What the server has logged so far (refused connections and publishes among it). */
    log: () => readFileSync(path.join(storeDir, 'nats.log'), 'utf8'),
    stop: () => down(),
    /** Stops the server (SIGKILL: as a crash) and starts it again on the same port and store. */
    restart: async (signal: NodeJS.Signals = 'SIGTERM') => {
      await down(signal);
      await up();
    },
    destroy: async () => {
      await down();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/**
 * A three-node NATS cluster of the test's own (JetStream on every node, stores in temporary
 * folders): `url` names all three; `stopNode(i)` takes one down and `startNode(i)` brings it back.
 */
export async function startNatsCluster() {
  const clients = [await freePort(), await freePort(), await freePort()];
  const routes = [await freePort(), await freePort(), await freePort()];
  const storeDir = mkdtempSync(path.join(tmpdir(), 'kn-nats-cluster-'));
  const binary = testSettings.natsServerBinary();
  const nodes: Array<ChildProcess | undefined> = [];
  const routeList = routes.map((p) => `nats://127.0.0.1:${p}`).join(',');

  async function startNode(i: number) {
    nodes[i] = spawn(
      binary,
      [
        ...['--name', `node-${i}`, '-a', '127.0.0.1', '-p', String(clients[i]), '-js', '-sd', path.join(storeDir, `node-${i}`)],
        ...['--cluster_name', 'kn-test', '--cluster', `nats://127.0.0.1:${routes[i]}`, '--routes', routeList],
      ],
      { stdio: 'ignore' },
    );
    await waitFor(() => listening(clients[i]!), { what: `nats node ${i}` });
  }
  async function stopNode(i: number) {
    const node = nodes[i];
    if (!node || node.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      node.once('exit', () => resolve());
      node.kill('SIGTERM');
    });
  }
  await Promise.all([0, 1, 2].map(startNode));
  return {
    url: clients.map((p) => `nats://127.0.0.1:${p}`).join(','),
    startNode,
    stopNode,
    destroy: async () => {
      await Promise.all([0, 1, 2].map(stopNode));
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
