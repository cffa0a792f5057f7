import { type Kysely, sql, type Transaction } from 'kysely';

/** What `afterCommit` registered, by the transaction `transaction()` runs its work in. */
const registered = new WeakMap<Transaction<any>, Array<() => void>>();

/**
 * Runs `work` in a transaction and, once it committed, what the work registered with
 * `afterCommit`: telling other parts of the process about rows they can only see after the commit
 * (a worker that would otherwise look too early and then wait for its next poll). Nothing runs
 * when the transaction rolls back. Every callback runs even when one throws; the first error is
 * then thrown, with the transaction committed.
 */
export async function transaction<S, T>(db: Kysely<S>, work: (tx: Transaction<S>) => Promise<T>): Promise<T> {
  const callbacks: Array<() => void> = [];
  const result = await db.transaction().execute((tx) => {
    registered.set(tx, callbacks);
    return work(tx);
  });
  let failure: { err: unknown } | undefined;
  for (const callback of callbacks) {
    try {
      callback();
    } catch (err) {
      failure ??= { err };
    }
  }
  if (failure) throw failure.err;
  return result;
}

/**
 * Runs `callback` once the transaction `executor` is committed (`transaction()` must have begun
 * it: a transaction begun otherwise has nobody to run it, which is an error here rather than a
 * callback that never runs). Outside a transaction every statement commits by itself: it runs now.
 */
export function afterCommit(executor: Kysely<any> | Transaction<any>, callback: () => void): void {
  if (!executor.isTransaction) {
    callback();
    return;
  }
  const callbacks = registered.get(executor as Transaction<any>);
  if (!callbacks) throw new Error('afterCommit needs a transaction begun by transaction() of @kn/db');
  callbacks.push(callback);
}

/**
 * Runs `work` in a transaction (`transaction()`) that holds the advisory lock named `key`, or
 * answers `busy` without running it while another transaction holds that lock: work that one
 * instance of a service does at a time. The lock is the transaction's, so it also goes when the
 * process holding it dies.
 */
export function whenLockFree<S, T>(db: Kysely<S>, key: string, busy: T, work: (tx: Transaction<S>) => Promise<T>): Promise<T> {
  return transaction(db, async (tx) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtext(${key})) as locked`.execute(tx);
    return rows[0]?.locked ? work(tx) : busy;
  });
}
