import { type ColumnType, Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import pg from 'pg';
import { boundByDeadlines } from './deadline.ts';

// Postgres bigint (count(*), sums) arrives as a string by default; our counts fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db<S> = Kysely<S>;
export type Tx<S> = Transaction<S>;
/** Domain code takes either, so the same function runs inside and outside a transaction. */
export type Executor<S> = Kysely<S> | Transaction<S>;
export { turnBatched } from './batch.ts';
export { deadlineLeft, QUERY_CANCELED, withDeadline, withoutDeadline } from './deadline.ts';
export { afterCommit, transaction, whenLockFree } from './transaction.ts';
export type { Migration };
export { sql };

/** A jsonb column: read as T, written as the JSON text made by `json()` (optional on insert: columns have defaults). */
export type Json<T> = ColumnType<T, string | undefined, string>;
export const json = (value: unknown) => JSON.stringify(value);

/**
 * A random read as the planner prices it, against 1 for a page read in sequence. Postgres's 4
 * assumes spinning disks; our hot data is in memory or on SSD, where the two cost about the same.
 * At 4, a list's statement read each tag's label by scanning the whole tags table (a few pages at
 * a few hundred tags), once per tag of the page: 40% of the statement's CPU (bench:content's seed,
 * pgbench on the statement: 0.58 ms against 0.38 ms a page of search results, 0.49 against 0.31 the
 * first page of the list).
 */
const RANDOM_PAGE_COST = 1.1;

/**
 * A Kysely instance bound to one service's Postgres schema: every connection of its pool has
 * `search_path` set to that schema, so queries name bare tables and never reach another schema.
 */
export function createDb<S>(options: { url: string; schema: string; poolSize?: number; onError?: (err: Error) => void }): Kysely<S> {
  if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error(`invalid schema name ${options.schema}`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    options: `-c search_path=${options.schema} -c random_page_cost=${RANDOM_PAGE_COST}`,
  });
  // A connection the server closes (restart, failover, a dropped database) must not take the
  // process down: an idle one is replaced on the next checkout (the pool's 'error'), one checked
  // out fails its query (the client's 'error' would otherwise be unhandled and end the process).
  pool.on('error', (err) => options.onError?.(err));
  pool.on('connect', (client) => {
    client.on('error', (err) => options.onError?.(err));
    prepareStatements(client);
  });
  boundByDeadlines(pool);
  return new Kysely<S>({ dialect: new PostgresDialect({ pool }) });
}

/** How many statements one connection keeps prepared at most (the rest are parsed and planned each time). */
const PREPARED_PER_CONNECTION = 200;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
/**
 * Statements that lock rows stay unprepared: the outbox relay's `for update skip locked` read,
 * prepared, drained 300,000 events in 221 s instead of 160 (bench:search's catch-up).
 */
const LOCKING = /\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b/i;

/**
 * Makes each connection prepare the statements it runs (named statements of the extended
 * protocol): a statement run again skips its parsing and planning, which for the hot reads (a page
 * of questions with its tags and category) were half of the database's CPU per request. A
 * statement is known by its text and prepared when it runs a second time; a connection keeps
 * PREPARED_PER_CONNECTION of them, the first ones it ran twice. When a migration elsewhere changes
 * a table under a prepared statement, Postgres refuses it ("cached plan must not change result
 * type"): the statement runs again unprepared (in a transaction, which the refusal aborted, the
 * transaction fails) and is prepared anew next time.
 */
function prepareStatements(client: pg.PoolClient) {
  const names = new Map<string, string>();
  const ranOnce = new Set<string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let next = 0;

  /** The name to run a text under: undefined while it is not (or may not be) prepared. */
  const nameFor = (text: string): string | undefined => {
    // Several statements in one text cannot be one prepared statement.
    if (text.includes(';') || !PREPARABLE.test(text) || LOCKING.test(text)) return undefined;
    // Prepared the second time it runs: texts that run once (lists of varying length) take no room.
    if (!ranOnce.has(text)) {
      if (ranOnce.size >= PREPARED_PER_CONNECTION) ranOnce.clear();
      ranOnce.add(text);
      return undefined;
    }
    if (names.size >= PREPARED_PER_CONNECTION) return undefined;
    ranOnce.delete(text);
    const name = `kn${next++}`;
    names.set(text, name);
    return name;
  };

  client.query = ((...args: unknown[]) => {
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) return query(...args);
    const name = names.get(text) ?? nameFor(text);
    if (name === undefined) return query(text, values);
    return (query({ name, text, values }) as Promise<unknown>).catch((err: { code?: string }) => {
      if (err.code !== '0A000') throw err;
      names.delete(text);
      // Refused before it ran: outside a transaction ('I': idle) it runs again, unprepared.
      if (client.getTransactionStatus() !== 'I') throw err;
      return query(text, values);
    });
  }) as typeof client.query;
}

/** Applies the service's migrations (in key order) inside its schema, creating the schema first. */
export async function migrate(db: Kysely<unknown>, schema: string, migrations: Record<string, Migration>) {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return results ?? [];
}

/** Creates a database if it does not exist (tests and first start on a fresh machine). */
export async function ensureDatabase(url: string) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    // Two processes starting at once may both try; the loser sees a duplicate.
    if ((err as { code?: string }).code !== '42P04' && (err as { code?: string }).code !== '23505') throw err;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

/** Postgres error codes we turn into contract errors rather than 500s. */
export const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505';
