import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError, conflict } from '@kn/contracts';
import { type Kysely, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { BusTables } from './tables.ts';

/**
 * Exactly-once effects of requests sent with an `Idempotency-Key`. The gateway remembers answers
 * too (a key-value bucket), but it cannot know the outcome of a request whose answer was lost (the
 * service stopped, or NATS, after the change committed); a retry would change things twice. So
 * the key travels with the request to the service, and the service records it in the transaction
 * of the change, the one that writes its events (`writeEvent` calls `recordRequestKey`). The
 * answer is kept beside the key, and a retry gets it again.
 *
 * A retry may also arrive while the first attempt is still running (the gateway gave up waiting
 * for it, or the client retried through another gateway): it must wait for that attempt and answer
 * what it answered, never run the handler beside it (its domain checks would see the first
 * attempt's uncommitted change and refuse with an error of their own). So every keyed request runs
 * under a Postgres advisory lock of its key, held on a connection of a pool of its own (a request
 * waiting for the lock must not hold a connection its handler, or the first attempt's, needs). A
 * process that dies releases its locks with its connections.
 */
const current = new AsyncLocalStorage<string>();

/** A second run of a request whose change is recorded already, and whose answer was lost. */
export class CarriedOutBefore extends AppError {
  constructor() {
    super(409, 'Conflict', 'this request was carried out before (same Idempotency-Key); its answer was lost');
  }
}

/** Records the key of the request being handled, if any, in the transaction of its change. */
export async function recordRequestKey(tx: Transaction<any>) {
  const key = current.getStore();
  if (key === undefined) return;
  const { rows } = await sql<{ txid: string; mine: boolean }>`
    insert into request_keys (key, txid) values (${key}, txid_current()::text)
    on conflict (key) do update set key = excluded.key
    returning txid, txid = txid_current()::text as mine`.execute(tx);
  // Recorded by an earlier transaction of this request (its lock was lost with its connection).
  if (!rows[0]?.mine) throw new CarriedOutBefore();
}

export interface RequestKeys {
  /**
   * Runs a keyed request once: waits while another attempt with the key runs, answers the kept
   * answer when there is one, refuses when the change was made but its answer lost, and otherwise
   * runs `handle` (its changes record the key) and keeps its answer.
   */
  once(key: string, handle: () => Promise<string>): Promise<string>;
  stop(): Promise<void>;
}

/** Lock waits longer than this answer 409 "still running" (the gateway has given up by then). */
const LOCK_WAIT_MS = 15_000;

export function requestKeys(options: {
  db: Kysely<any>;
  databaseUrl: string;
  schema: string;
  poolSize: number;
  onError?: (err: Error) => void;
}): RequestKeys {
  const db = options.db as Kysely<BusTables>;
  const locks = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    options: `-c lock_timeout=${LOCK_WAIT_MS}`,
  });
  locks.on('error', (err) => options.onError?.(err));
  locks.on('connect', (client) => client.on('error', (err) => options.onError?.(err)));
  // Advisory locks are per database, and the services may share one: the schema is part of the lock.
  const lockId = (key: string) => `${options.schema}\n${key}`;

  async function kept(key: string) {
    const row = await db.selectFrom('request_keys').select('reply').where('key', '=', key).executeTakeFirst();
    return row ? { reply: row.reply ?? undefined } : undefined;
  }

  return {
    async once(key, handle) {
      const client = await locks.connect();
      let broken: Error | undefined;
      try {
        try {
          await client.query('select pg_advisory_lock(hashtextextended($1, 0))', [lockId(key)]);
        } catch (err) {
          if ((err as { code?: string }).code === '55P03')
            throw conflict('a request with this Idempotency-Key is still running; try again later');
          throw err;
        }
        const recorded = await kept(key);
        if (recorded?.reply !== undefined) return recorded.reply;
        if (recorded) throw new CarriedOutBefore();
        const reply = await current.run(key, handle);
        // The change is made: answer it even when its answer cannot be kept (Postgres just went away).
        await db
          .updateTable('request_keys')
          .set({ reply })
          .where('key', '=', key)
          .execute()
          .catch((err) => options.onError?.(err as Error));
        if (Math.random() < 0.01)
          await db
            .deleteFrom('request_keys')
            .where('created', '<', sql<Date>`now() - interval '1 day'`)
            .execute()
            .catch(() => {});
        return reply;
      } finally {
        await client.query('select pg_advisory_unlock(hashtextextended($1, 0))', [lockId(key)]).catch((err) => {
          broken = err;
        });
        // A connection whose unlock failed may still hold the lock: it is closed, not reused.
        client.release(broken ?? false);
      }
    },
    stop: () => locks.end(),
  };
}
