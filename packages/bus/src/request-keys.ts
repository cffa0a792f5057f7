import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '@kn/contracts';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BusTables } from './tables.ts';

/**
 * Exactly-once effects of requests sent with an `Idempotency-Key`. The gateway remembers answers
 * too (a key-value bucket), but it cannot know the outcome of a request whose answer was lost (the
 * service stopped, or NATS, after the change committed); a retry would change things twice. So
 * the key travels with the request to the service, and the service records it in the transaction
 * of the change, the one that writes its events (`writeEvent` calls `recordRequestKey`): a second
 * run of the request conflicts there and changes nothing. The answer is kept beside the key, and
 * a retry gets it again.
 */
const current = new AsyncLocalStorage<string>();

/** A second run of a request whose change is recorded already. */
export class CarriedOutBefore extends AppError {
  constructor() {
    super(409, 'Conflict', 'this request was carried out before (same Idempotency-Key); its answer was lost');
  }
}

/** Runs a request's handler with its key, for `recordRequestKey` to find. */
export const withRequestKey = <T>(key: string, run: () => Promise<T>) => current.run(key, run);

/** Records the key of the request being handled, if any, in the transaction of its change. */
export async function recordRequestKey(tx: Transaction<any>) {
  const key = current.getStore();
  if (key === undefined) return;
  const { rows } = await sql<{ txid: string; mine: boolean }>`
    insert into request_keys (key, txid) values (${key}, txid_current()::text)
    on conflict (key) do update set key = excluded.key
    returning txid, txid = txid_current()::text as mine`.execute(tx);
  // Recorded by an earlier transaction: this request was carried out before (its answer was lost).
  if (!rows[0]?.mine) throw new CarriedOutBefore();
}

/** The answer kept for a key, undefined when the key is unknown or its answer was never sent. */
export async function keptReply(db: Kysely<any>, key: string): Promise<string | undefined> {
  const row = await (db as Kysely<BusTables>).selectFrom('request_keys').select('reply').where('key', '=', key).executeTakeFirst();
  return row?.reply ?? undefined;
}

/** Keeps the answer of a request whose change recorded its key; forgets keys older than a day. */
export async function keepReply(db: Kysely<any>, key: string, reply: string) {
  const kdb = db as Kysely<BusTables>;
  await kdb.updateTable('request_keys').set({ reply }).where('key', '=', key).execute();
  if (Math.random() < 0.01) await kdb.deleteFrom('request_keys').where('created', '<', sql<Date>`now() - interval '1 day'`).execute();
}
