// Shared helpers of the benchmarks: start the system as separate processes, drive load, print.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { KnClient } from '@kn/client';
import { DEFAULT_TEST_DATABASE_URL, isolation } from '@kn/testing';
import autocannon from 'autocannon';
import { overLocalSocket, postgresAt } from '../infra/local-postgres.ts';

export interface LoadResult {
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time (ms) so far of each process of this name (a server the system runs on), by pid. */
function serverCpuMs(name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p)))
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) out.set(Number(pid), processCpuMs(Number(pid)));
    } catch {
      // The process ended between the listing and the read.
    }
  return out;
}

/** CPU a server's processes used since `before`: of those alive now (one that ended meanwhile took its share along). */
function serverCpuSince(name: string, before: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of serverCpuMs(name)) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** Busy CPU time of the whole machine so far, in ms. */
function machineCpuMs(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  return (n.reduce((a, b) => a + b, 0) - n[3]! - n[4]!) * 10;
}

/** The servers under the system, by process name, whose CPU per request the loads report too. */
const SERVERS = ['postgres', 'nats-server'];

/**
 * CPU (ms) used from now on by each process named (name → pid), the servers, the benchmark itself
 * (`load`, unless it is one of those named) and the whole machine: each figure as of the call of
 * the function it returns.
 */
export function cpuMeter(processes: Record<string, number>): () => Array<[name: string, ms: number]> {
  const named = Object.entries(processes);
  const before = named.map(([, pid]) => processCpuMs(pid));
  const serversBefore = SERVERS.map(serverCpuMs);
  const clientBefore = processCpuMs(process.pid);
  const machineBefore = machineCpuMs();
  return () => [
    ...named.map(([name, pid], i): [string, number] => [name, processCpuMs(pid) - before[i]!]),
    ...SERVERS.map((name, i): [string, number] => [name, serverCpuSince(name, serversBefore[i]!)]),
    ...(named.some(([, pid]) => pid === process.pid) ? [] : [['load', processCpuMs(process.pid) - clientBefore] as [string, number]]),
    ['machine', machineCpuMs() - machineBefore],
  ];
}

/** Where each started process serves its Prometheus metrics (from its log line before the ready one), by pid. */
const metricsUrls = new Map<number, string>();

/** The event loop's longest delay and the full collections since the last call (prom-client's nodejs_ metrics: the delay's histogram restarts at each scrape). */
async function pauses(url: string): Promise<{ lag_ms: number; full_gcs: number; full_gc_ms: number }> {
  const text = await (await fetch(url)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    lag_ms: value(/^kn_nodejs_eventloop_lag_max_seconds\{[^}]*\} (\S+)$/m) * 1000,
    full_gcs: value(/^kn_nodejs_gc_duration_seconds_count\{[^}]*kind="major"[^}]*\} (\S+)$/m),
    full_gc_ms: value(/^kn_nodejs_gc_duration_seconds_sum\{[^}]*kind="major"[^}]*\} (\S+)$/m) * 1000,
  };
}

/**
 * What stopped each named process during a phase: its event loop's longest delay, and its full
 * garbage collections (count and time). A request waits out any pause of its process, so one
 * pause of a few hundred ms shows in the p99 of every load that ran through it.
 */
export async function pauseMeter(processes: Record<string, number>): Promise<() => Promise<string>> {
  const named = Object.entries(processes).flatMap(([name, pid]) => {
    const url = metricsUrls.get(pid);
    return url ? [{ name, url }] : [];
  });
  const before = await Promise.all(named.map((p) => pauses(p.url)));
  return async () => {
    const after = await Promise.all(named.map((p) => pauses(p.url)));
    return named
      .map(({ name }, i) => {
        const gcs = after[i]!.full_gcs - before[i]!.full_gcs;
        const gcMs = after[i]!.full_gc_ms - before[i]!.full_gc_ms;
        return `${name} ${Math.round(after[i]!.lag_ms)} ms${gcs ? ` (${gcs} full GC, ${Math.round(gcMs)} ms)` : ''}`;
      })
      .join(', ');
  };
}

export async function load(options: {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  requests?: autocannon.Request[];
  /** Requests per second over all connections (a steady load); as fast as they answer when unset. */
  rate?: number;
  /** Processes whose CPU time per request to report (name → pid), beside the machine's. */
  processes?: Record<string, number>;
  /** Names the load in the profile window it prints with PROFILE_DIR. */
  label?: string;
}): Promise<LoadResult & { cpu_ms_per_request?: string; longest_pause?: string }> {
  const cpu = options.processes && cpuMeter(options.processes);
  const pause = options.processes && (await pauseMeter(options.processes));
  const window = profileWindow(options.label ?? 'load');
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
    requests: options.requests,
    overallRate: options.rate,
  });
  const measured = {
    requests_per_second: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non_2xx: result.non2xx,
  };
  window.end();
  if (!cpu) return measured;
  // Two decimals below a millisecond: a users request costs tenths of one.
  const perRequest = (ms: number) => {
    const value = ms / Math.max(1, result.requests.total);
    return value.toFixed(value < 1 ? 2 : 1);
  };
  return {
    ...measured,
    cpu_ms_per_request: cpu()
      .map(([name, ms]) => `${name} ${perRequest(ms)}`)
      .join(', '),
    longest_pause: await pause!(),
  };
}

/** CPU profiles (`--cpu-prof`) time their samples in microseconds of the machine's monotonic clock, as this does. */
const monotonicMicroseconds = () => process.hrtime.bigint() / 1000n;

/**
 * A phase's window on the profiles' clock, printed when it ends with PROFILE_DIR:
 * `node bench/profile.ts <profile> <from> <to>` reads it.
 */
export function profileWindow(label: string) {
  const from = monotonicMicroseconds();
  return {
    end: () => {
      if (process.env.PROFILE_DIR) console.log(`profile window ${label}: ${from} ${monotonicMicroseconds()}`);
    },
  };
}

/** Processes a benchmark started and has not stopped: they end with it, however it ends. */
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
});
/** Where the benchmark's space reaches Postgres (postgresAt), for the report. */
let postgres = '';

/** The benchmark's space (benchSpace): dropped when a process fails to start, before the benchmark's own cleanup is in place. */
let benchmarkSpace: { drop(): Promise<void> } | null = null;

/** Starts a process of the system (the same entry point production uses) and waits for its line. */
export function startProcess(entry: string, env: Record<string, string>, readyText: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // PROFILE_DIR=<dir>: every process writes a CPU profile there when it stops (node --cpu-prof).
    const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
    // Every process of a benchmark serves its metrics on a free port of its own.
    const child = spawn(process.execPath, [...profile, entry], {
      env: { ...process.env, METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    started.add(child);
    child.once('exit', () => started.delete(child));
    let buffer = '';
    let ready = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      // Read until the line: a long benchmark's logs after it are not kept.
      if (ready) return;
      buffer += chunk.toString();
      if (buffer.includes(readyText)) {
        ready = true;
        const metrics = /"metrics":"([^"]+)"/.exec(buffer)?.[1];
        if (metrics && child.pid) metricsUrls.set(child.pid, metrics);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      if (ready) return;
      const failed = new Error(`${entry} exited with ${code}`);
      for (const other of started) other.kill('SIGKILL');
      void (benchmarkSpace?.drop() ?? Promise.resolve()).finally(() => reject(failed));
    });
  });
}

/**
 * How fast this machine is now, by two fixed workloads: `js_ms`, the milliseconds one core takes
 * for what a service does with a page of questions (JSON out and back, a SHA-256, its words), 2,000
 * times, the best of three; `ipc_us`, the microseconds of one round trip of a small message with
 * another process over a Unix socket (what every hop of a request pays: a write, a wakeup, a
 * read), the median of 5,000. The same code has measured twice as slow on one day as on another
 * on this kind of machine: compare figures of different runs through these, not by their dates.
 */
async function machineReference(): Promise<{ js_ms: number; ipc_us: number }> {
  const words = 'hop yeast malt barrel stout lager ferment bottle pressure gravity'.split(' ');
  const page = Array.from({ length: 10 }, (_, i) => ({
    id: i,
    title: `How long does a ${words[i]} take?`,
    description: Array.from({ length: 150 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(' '),
    created: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
    tags: [words[i], words[(i + 3) % words.length]],
  }));
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    let sink = 0;
    for (let k = 0; k < 2000; k++) {
      const text = JSON.stringify(page);
      sink += (JSON.parse(text) as unknown[]).length + createHash('sha256').update(text).digest()[0]! + text.split(/\W+/).length;
    }
    best = Math.min(best, performance.now() - started);
    // Used, so that the compiler cannot leave the work out.
    if (sink < 0) console.log(sink);
  }
  const socket = path.join(tmpdir(), `kn-bench-reference-${process.pid}.sock`);
  rmSync(socket, { force: true });
  const echo = spawn(
    process.execPath,
    ['-e', `require('node:net').createServer((s) => s.pipe(s)).listen(${JSON.stringify(socket)}, () => console.log('ready'))`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise((resolve) => echo.stdout!.once('data', resolve));
    const client = connect(socket);
    await new Promise((resolve) => client.once('connect', resolve));
    const message = Buffer.alloc(64, 1);
    const times: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const started = performance.now();
      await new Promise<void>((resolve) => {
        let received = 0;
        const onData = (chunk: Buffer) => {
          received += chunk.length;
          if (received < message.length) return;
          client.off('data', onData);
          resolve();
        };
        client.on('data', onData);
        client.write(message);
      });
      times.push(performance.now() - started);
    }
    client.destroy();
    times.sort((a, b) => a - b);
    return { js_ms: Math.round(best), ipc_us: Math.round(times[times.length >> 1]! * 1000) };
  } finally {
    echo.kill();
    rmSync(socket, { force: true });
  }
}

let reference: { js_ms: number; ipc_us: number } | null = null;

/** The machine's reference figures (machineReference) as the reports and headlines print them. */
export const referenceText = () => (reference ? `machine reference: js ${reference.js_ms} ms, ipc ${reference.ipc_us} µs` : '');

/**
 * A database and NATS namespace of the benchmark's own (`isolation()` of @kn/testing): `drop()`
 * removes both, and an interrupted benchmark (Ctrl-C, SIGTERM) drops them before it exits.
 */
export async function benchSpace() {
  // Measured first, on a machine the benchmark does not load yet.
  reference = await machineReference();
  // Postgres as up.ts reaches it on this machine: over its Unix socket when it has one
  // (TEST_DATABASE_URL names another server, or the TCP address itself).
  process.env.TEST_DATABASE_URL ??= await overLocalSocket(DEFAULT_TEST_DATABASE_URL);
  postgres = postgresAt(process.env.TEST_DATABASE_URL);
  const space = isolation();
  benchmarkSpace = space;
  const interrupted = (signal: NodeJS.Signals) => {
    console.error(`${signal}: stopping its processes, dropping ${space.namespace} and its database`);
    // Dropped once they are gone: a service still connected could make a stream again.
    const gone = [...started].map((child) =>
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve)),
    );
    for (const child of started) child.kill('SIGKILL');
    void Promise.all(gone)
      .then(() => space.drop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return space;
}

/**
 * What every process of a benchmark's system starts with: the benchmark's own database and NATS
 * namespace, the gateway on this loopback port, the administrator's password; a bench adds its own.
 */
export const serviceEnv = ({ databaseUrl, namespace }: { databaseUrl: string; namespace: string }, port: number) => ({
  DATABASE_URL: databaseUrl,
  NATS_NAMESPACE: namespace,
  LOG_LEVEL: 'info',
  ADMIN_PASSWORD: 'bench-admin-password',
  PORT: String(port),
  HOST: '127.0.0.1',
});

export const stopProcess = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export function report(title: string, command: string, rows: Record<string, unknown>[]) {
  const reached = postgres ? `, Postgres at ${postgres}` : '';
  console.log(`\n${title}\ncommand: ${command}\nmachine: ${cpus().length} cores, node ${process.version}${reached}; ${referenceText()}\n`);
  console.table(rows);
}

/**
 * A client of the API (`api`: its `/api/v1` URL) logged in; the benchmarks' administrator by
 * default, who also lifts the network's rate limits: a benchmark sends more requests per token than
 * a person does. `bearer(client)` gives its header for load generators.
 */
export async function login(api: string, email = 'admin@example.com', password = 'bench-admin-password'): Promise<KnClient> {
  const client = await new KnClient({ baseUrl: api }).login(email, password);
  if (email === 'admin@example.com') {
    await client.call('updateNetworkSettings', { body: { rate_limit_per_minute: 0, login_attempts_per_minute: 0 } });
    // Every gateway hears of the new settings from their event.
    await new Promise((r) => setTimeout(r, 500));
  }
  return client;
}

/** The Authorization header of a logged-in client. */
export const bearer = (client: KnClient) => ({ authorization: `Bearer ${client.options.token}` });
