import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

/**
 * The moment (epoch ms) by which the request being served must be answered: the gateway gives up
 * then and answers 503, so work still running for it after that only takes resources from the
 * requests that can still be answered. Statements run for a request wait for a connection and run
 * at most until then (`boundByDeadlines`); calls to other services get what is left.
 */
const current = new AsyncLocalStorage<number>();

/** Runs `work` under a deadline (epoch ms); a deadline already set that comes sooner stays. */
export function withDeadline<T>(at: number, work: () => Promise<T>): Promise<T> {
  const outer = current.getStore();
  return current.run(outer === undefined ? at : Math.min(outer, at), work);
}

/** Runs `work` with no deadline: work of several requests at once (a batched read). */
export function withoutDeadline<T>(work: () => T): T {
  return current.exit(work);
}

/** Milliseconds left until the current request's deadline; undefined outside a request. */
export function deadlineLeft(): number | undefined {
  const at = current.getStore();
  return at === undefined ? undefined : at - Date.now();
}

/** Postgres's code for a statement cancelled on request: the same for ours. */
export const QUERY_CANCELED = '57014';

/** The error of work stopped at its request's deadline. */
class DeadlineExceeded extends Error {
  readonly code = QUERY_CANCELED;
  constructor(what: string) {
    super(`${what}: the request's deadline passed`);
    this.name = 'DeadlineExceeded';
  }
}

/** What pg's client knows of its connection and does not type. */
type ActiveClient = pg.PoolClient & { activeQuery?: unknown; processID?: number; secretKey?: number; host?: string; port?: number };

/**
 * Makes a pool's statements keep their request's deadline: a checkout that would wait past it
 * fails, and a statement still running at it is cancelled on the server (Postgres's cancel
 * request, sent over a connection of its own: the pool may have none to spare, which is when it
 * matters most). Outside a request nothing changes.
 */
export function boundByDeadlines(pool: pg.Pool) {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (() => {
    const left = deadlineLeft();
    if (left === undefined) return connect();
    if (left <= 0) return Promise.reject(new DeadlineExceeded('waiting for a database connection'));
    return new Promise<pg.PoolClient>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new DeadlineExceeded('waiting for a database connection'));
      }, left);
      connect().then(
        (client) => {
          clearTimeout(timer);
          // Taken after the caller gave up: straight back to the pool.
          if (late) client.release();
          else resolve(client);
        },
        (err) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }) as typeof pool.connect;

  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const left = deadlineLeft();
      // A rollback always runs: it returns the connection to the pool clean.
      if (left === undefined || typeof args[args.length - 1] === 'function' || ROLLBACK.test(String(args[0]))) return query(...args);
      if (left <= 0) return Promise.reject(new DeadlineExceeded('a database statement'));
      // Until this statement settles the connection is its request's: what runs on it then is ours.
      const timer = setTimeout(() => cancel(client as ActiveClient), left);
      return (query(...args) as Promise<unknown>).finally(() => clearTimeout(timer));
    }) as typeof client.query;
  });
}

const ROLLBACK = /^\s*rollback\b/i;

/** The part of pg's protocol connection a cancel request uses (not in its types). */
type CancelConnection = {
  on(event: 'error', listener: () => void): void;
  once(event: 'connect', listener: () => void): void;
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  end(): void;
};

/** Asks the server to cancel the statement running on `client`'s backend. */
function cancel(client: ActiveClient) {
  const { activeQuery: query, processID, secretKey } = client;
  if (query === undefined || processID === undefined || secretKey === undefined) return;
  const canceller = new pg.Connection() as unknown as CancelConnection;
  canceller.on('error', () => {});
  canceller.once('connect', () => {
    // Checked at the moment of sending: a statement that ended meanwhile may have been followed
    // by another request's on the same connection, which must not be the one cancelled.
    if (client.activeQuery === query) canceller.cancel(processID, secretKey);
    canceller.end();
  });
  const host = client.host ?? '127.0.0.1';
  const port = client.port ?? 5432;
  if (host.startsWith('/')) canceller.connect(`${host}/.s.PGSQL.${port}`);
  else canceller.connect(port, host);
}
