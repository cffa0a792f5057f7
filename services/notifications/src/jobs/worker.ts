import { sleeper } from '@kn/bus';
import { type Db, sql } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { Selectable } from 'kysely';
import type { NotificationsSchema } from '../db/schema.ts';

export interface Worker {
  /** Look for due work now (new rows were committed). */
  wake(): void;
  /** Runs rounds until nothing is due right now (tests). */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A loop over an outbox table: `round` claims due rows (SKIP LOCKED plus a lease, so each row is
 * worked on by one instance at a time), handles them and returns how many it claimed. It sleeps
 * for `pollMs` when idle, or until woken.
 */
export function startWorker(options: { name: string; pollMs: number; logger: Logger; round: () => Promise<number> }): Worker {
  const log = options.logger.child({ worker: options.name });
  // Cleared before each round: rows committed while a round looks must not wait for the poll.
  const idle = sleeper();
  let current: Promise<number> | undefined;

  const runRound = async () => {
    current = options.round();
    try {
      return await current;
    } catch (err) {
      log.warn({ err }, 'worker round failed');
      return 0;
    } finally {
      current = undefined;
    }
  };

  const loop = (async () => {
    while (!idle.stopped) {
      idle.clear();
      const n = await runRound();
      if (n === 0) await idle.sleep(options.pollMs);
    }
  })();

  return {
    wake: () => idle.wake(),
    async drain() {
      while (current) await current.catch(() => 0);
      while ((await runRound()) > 0) {}
    },
    async stop() {
      idle.stop();
      await loop;
    },
  };
}

type DeliveryTable = 'email_outbox' | 'webhook_deliveries';

/**
 * Takes up to 50 due, pending rows of a delivery table for this instance: each gets a lease (another
 * instance may take it again only after the lease runs out, for example after a crash) and counts an
 * attempt. SKIP LOCKED lets several instances claim at once without waiting on each other.
 */
export async function claimDue<T extends DeliveryTable, C extends keyof NotificationsSchema[T] & string>(
  db: Db<NotificationsSchema>,
  table: T,
  leaseMs: number,
  columns: readonly C[],
): Promise<Array<Selectable<Pick<NotificationsSchema[T], C>>>> {
  // One query for every delivery table: typed by the caller's columns, built over the table's name.
  const any = db as unknown as Db<any>;
  const name: string = table;
  const rows = await any
    .updateTable(name)
    .set({
      locked_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval`,
      attempts: sql<number>`attempts + 1`,
    })
    .where(
      'id',
      'in',
      any
        .selectFrom(name)
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt', '<=', sql<Date>`now()`)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', sql<Date>`now()`)]))
        .orderBy('next_attempt')
        .limit(50)
        .forUpdate()
        .skipLocked(),
    )
    .returning([...columns])
    .execute();
  return rows as Array<Selectable<Pick<NotificationsSchema[T], C>>>;
}
