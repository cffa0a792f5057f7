import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { natsProblem, postgresProblem } from '@kn/service';
import { freePort, isolation, waitFor } from '@kn/testing';

/**
 * Bad configuration, as an operator meets it: the processes as production starts them
 * (`node <entry>`), ending in one line that names the setting and the cause, after retrying
 * while the cause may pass; never a stack trace.
 */
const space = isolation();
const running: ChildProcess[] = [];
const servers: Server[] = [];
/** Connections the test's servers accepted: a server closes once they are gone. */
const sockets = new Set<Socket>();
afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  for (const socket of sockets) socket.destroy();
  for (const server of servers) await new Promise((r) => server.close(r));
  await space.drop();
});

/** Starts a process of the system; `output` collects what it writes, `exited` its exit code. */
function launch(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, NATS_NAMESPACE: space.namespace, DATABASE_URL: space.databaseUrl, METRICS_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** The message of the process's last log line. */
const lastLine = (output: string) => {
  const lines = output.trim().split('\n');
  return JSON.parse(lines.at(-1)!) as { level: number; msg: string; setting?: string };
};

async function endsWith(process: ReturnType<typeof launch>, setting: string, reason: RegExp) {
  expect(await process.exited).toBe(1);
  const line = lastLine(process.output());
  expect(line).toMatchObject({ level: 60, setting });
  expect(line.msg).toMatch(new RegExp(`^failed to start: ${setting}: ${reason.source}`));
  expect(process.output()).not.toMatch(/TypeError|\n\s+at /);
}

test('a gateway on a taken port says which port, in one line', async () => {
  const taken = createServer();
  servers.push(taken);
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as { port: number }).port;
  const gateway = launch('gateway/src/main.ts', { PORT: String(port), HOST: '127.0.0.1' });
  await endsWith(gateway, 'PORT', new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
});

test('a malformed URL names its setting', async () => {
  await endsWith(launch('services/users/src/main.ts', { DATABASE_URL: 'localhost:5432' }), 'DATABASE_URL', /must be a postgres:\/\/ URL/);
  await endsWith(launch('gateway/src/main.ts', { NATS_URL: 'http://127.0.0.1:4222', PORT: '0' }), 'NATS_URL', /must be nats:\/\/ URLs/);
});

test('Postgres or NATS that stay unreachable: retried for START_RETRY_MS, then one line', async () => {
  const closed = await freePort();
  const url = new URL(space.databaseUrl);
  url.port = String(closed);
  await endsWith(
    launch('services/users/src/main.ts', { DATABASE_URL: url.toString(), START_RETRY_MS: '1000' }),
    'DATABASE_URL',
    /connection refused .*\(still, after 1 s\)/,
  );
  await endsWith(
    launch('services/users/src/main.ts', { NATS_URL: `nats://127.0.0.1:${closed}`, START_RETRY_MS: '1000' }),
    'NATS_URL',
    /connection refused/,
  );
});

test('a service whose Postgres comes up later waits for it and starts', async () => {
  const port = await freePort();
  const url = new URL(space.databaseUrl);
  url.port = String(port);
  const users = launch('services/users/src/main.ts', { DATABASE_URL: url.toString(), START_RETRY_MS: '120000' });
  await waitFor(() => users.output().includes('waiting for a server; will try again'), { what: 'the service waiting for Postgres' });
  expect(users.output()).toContain('"setting":"DATABASE_URL"');
  // Postgres "comes up" on that port: a proxy to the machine's server.
  const proxy = createServer((client: Socket) => {
    const upstream = connect(5432, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  servers.push(proxy);
  await new Promise<void>((r) => proxy.listen(port, '127.0.0.1', r));
  await waitFor(() => users.output().includes('users service ready'), { timeoutMs: 30_000, what: 'the users service ready' });
  users.child.kill('SIGTERM');
  expect(await users.exited).toBe(0);
});

test('which problems may pass (retried) and which will not', () => {
  expect(postgresProblem(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toMatchObject({ passes: true });
  expect(postgresProblem(Object.assign(new Error('the database system is starting up'), { code: '57P03' }))).toMatchObject({
    passes: true,
  });
  expect(postgresProblem(Object.assign(new Error('password authentication failed'), { code: '28P01' }))).toMatchObject({ passes: false });
  expect(natsProblem(new Error('Authorization Violation'))).toMatchObject({ passes: false });
  expect(natsProblem(new Error('connection refused'))).toMatchObject({ passes: true });
});
