import { execFile } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { freePort, startNatsServer } from '@kn/testing';

/** infra/ensure-servers.sh with these settings: its exit code and what it wrote. */
async function ensureServers(env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', ['infra/ensure-servers.sh'], {
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** A program on a port of this machine that accepts connections and never says anything. */
async function silentServer() {
  const port = await freePort();
  const connections = new Set<Socket>();
  const server = createServer((socket) => connections.add(socket));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      }),
  };
}

test('a second run installs, starts and changes nothing, and says nothing', async () => {
  // The suite's first step (infra/test.sh) already ran it on this machine.
  expect(await ensureServers()).toEqual({ code: 0, stdout: '', stderr: '' });
});

test('a port taken by another program: one line that names the setting and the cause', async () => {
  const other = await silentServer();
  try {
    const nats = await ensureServers({ NATS_URL: `nats://127.0.0.1:${other.port}` });
    expect(nats.code).toBe(1);
    expect(nats.stderr).toBe(
      `127.0.0.1:${other.port} (the port of NATS_URL) is taken by a program that is not NATS: stop it, or point NATS_URL at a NATS server with JetStream\n`,
    );
    const postgres = await ensureServers({ TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${other.port}/postgres` });
    expect(postgres.code).toBe(1);
    expect(postgres.stderr.split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^127\\.0\\.0\\.1:${other.port} \\(the port of TEST_DATABASE_URL\\) answers, but not as PostgreSQL \\(.+\\): stop that program`,
        ),
      ),
      '',
    ]);
  } finally {
    await other.close();
  }
});

test('nothing on the port of a setting that names this machine: one line', async () => {
  const port = await freePort();
  const run = await ensureServers({ TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` });
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(
    new RegExp(
      `^nothing answers on 127\\.0\\.0\\.1:${port} \\(the port of TEST_DATABASE_URL\\): start PostgreSQL there, or point DATABASE_URL and TEST_DATABASE_URL at a PostgreSQL that runs elsewhere\\n$`,
    ),
  );
});

test('a NATS without JetStream: one line', async () => {
  const nats = await startNatsServer({ jetstream: false });
  try {
    const run = await ensureServers({ NATS_URL: nats.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`NATS on ${nats.url.replace('nats://', '')} (NATS_URL) runs without JetStream: restart it with -js\n`);
  } finally {
    await nats.destroy();
  }
});

test('a PostgreSQL that refuses the role: one line that names the role and the cause', async () => {
  const run = await ensureServers({ DATABASE_URL: 'postgres://no_such_role_here@127.0.0.1:5432/knowledge_network' });
  expect(run.code).toBe(1);
  expect(run.stderr.split('\n')).toEqual([
    expect.stringMatching(
      /^PostgreSQL on 127\.0\.0\.1:5432 \(DATABASE_URL\) does not let the role no_such_role_here in \(.+\): allow it in pg_hba\.conf/,
    ),
    '',
  ]);
});
