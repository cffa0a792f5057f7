import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A data set of the workplace (`shared/data/<name>`, beside the checkout, not in it): from
 * `SHARED_DATA_DIR`, else `../shared/data` of the repository root, else `/work/shared/data` (where it is
 * on the machines CI runs on), so a clone anywhere finds it.
 */
export function sharedData(name: string): string {
  // Tests and benchmarks run from the repository's root.
  const candidates = [process.env.SHARED_DATA_DIR, path.resolve(process.cwd(), '../shared/data'), '/work/shared/data'];
  for (const dir of candidates) if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  throw new Error(`data set ${name} not found in ${candidates.filter(Boolean).join(', ')}; set SHARED_DATA_DIR`);
}

/** Everything a test file touches is its own: database, NATS subjects and streams. */
export function isolation() {
  const id = randomBytes(4).toString('hex');
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const url = new URL(base);
  url.pathname = `/kn_test_${id}`;
  return { id, databaseUrl: url.toString(), namespace: `t${id}` };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; what?: string } = {},
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
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${options.what ?? 'condition'}${last ? `: ${(last as Error).message}` : ''}`);
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
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A NATS server of the test's own (the machine's nats-server binary, JetStream on, file store in a
 * temporary folder), so a test can stop and restart it without disturbing anything else.
 */
export async function startNatsServer() {
  const port = await freePort();
  const storeDir = mkdtempSync(path.join(tmpdir(), 'kn-nats-'));
  const binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  let child: ChildProcess | undefined;

  async function up() {
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await waitFor(() => listening(port), { what: `nats-server on port ${port}` });
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
  const binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
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
