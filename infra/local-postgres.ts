// A Postgres server on this machine answers over its Unix socket for less CPU than over TCP
// loopback: each query and each answer is a socket write, and on this 2-core machine the writes to
// Postgres over TCP were two fifths of the users service's CPU per request (docs/operations.md).
// Used by up.ts, scale.ts and the benchmarks, which run everything on one machine.
import { existsSync } from 'node:fs';
import { BaseConfig } from '@kn/service';
import pg from 'pg';

/** Where Debian's packages (and most others) put the socket, then PostgreSQL's own default. */
const SOCKET_DIRECTORIES = ['/var/run/postgresql', '/tmp'];

/**
 * `url` with the server's Unix socket as its host, when the URL names this machine, the socket is
 * there and it lets the URL's user in (a socket may ask for another authentication than TCP);
 * otherwise `url` unchanged.
 */
export async function overLocalSocket(url: string): Promise<string> {
  const parsed = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname) || parsed.searchParams.has('host')) return url;
  const port = parsed.port || '5432';
  const directory = SOCKET_DIRECTORIES.find((dir) => existsSync(`${dir}/.s.PGSQL.${port}`));
  if (!directory) return url;
  parsed.searchParams.set('host', directory);
  const candidate = parsed.toString();
  // Asks the server's own database, which exists before ours does.
  const probe = new URL(candidate);
  probe.pathname = '/postgres';
  const client = new pg.Client({ connectionString: probe.toString() });
  try {
    await client.connect();
    return candidate;
  } catch {
    return url;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The DATABASE_URL of the processes up.ts and scale.ts start: the one set, or the default server's over its socket. */
export async function databaseUrlOnThisMachine(): Promise<string> {
  return process.env.DATABASE_URL ?? overLocalSocket(BaseConfig.shape.DATABASE_URL.parse(undefined));
}

/** Where a DATABASE_URL reaches Postgres, without its credentials. */
export function postgresAt(url: string) {
  const { host, searchParams } = new URL(url);
  return searchParams.has('host') ? `the Unix socket in ${searchParams.get('host')}` : host;
}
