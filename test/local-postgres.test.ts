import { existsSync } from 'node:fs';
import { DEFAULT_TEST_DATABASE_URL } from '@kn/testing';
import pg from 'pg';
import { overLocalSocket, postgresAt } from '../infra/local-postgres.ts';

/** up.sh, `pnpm scale` and the benchmarks reach this machine's Postgres over its Unix socket (infra/local-postgres.ts). */
const tcp = DEFAULT_TEST_DATABASE_URL;
const socketDirectory = ['/var/run/postgresql', '/tmp'].find((dir) => existsSync(`${dir}/.s.PGSQL.5432`));

async function serverAddress(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // null over a Unix socket, the server's IP address over TCP.
    const { rows } = await client.query<{ address: string | null }>('select inet_server_addr()::text as address');
    return rows[0]!.address;
  } finally {
    await client.end();
  }
}

test('the server of this machine is reached over its socket, and the URL still names the same database and user', async () => {
  const url = await overLocalSocket(tcp);
  if (!socketDirectory) {
    // A server without a socket on this machine: the URL is left as it is.
    expect(url).toBe(tcp);
    return;
  }
  expect(new URL(url).searchParams.get('host')).toBe(socketDirectory);
  expect(await serverAddress(url)).toBeNull();
  expect(await serverAddress(tcp)).toBe('127.0.0.1/32');
  expect(postgresAt(url)).toBe(`the Unix socket in ${socketDirectory}`);
  expect(postgresAt(tcp)).toBe('127.0.0.1:5432');
});

test('a server elsewhere, a URL that names its socket already, or a user the socket refuses keeps the URL as given', async () => {
  for (const url of [
    'postgres://postgres@db.example.com:5432/knowledge_network',
    'postgres://postgres@localhost:5432/knowledge_network?host=/somewhere/else',
    'postgres://no_such_role_here@127.0.0.1:5432/knowledge_network',
  ])
    expect(await overLocalSocket(url)).toBe(url);
});
