import { afterCommit, createDb, ensureDatabase, sql, transaction, whenLockFree } from '@kn/db';
import { isolation } from '@kn/testing';
import type { Kysely } from 'kysely';

/** After-commit callbacks and the advisory lock, on the real Postgres in a database of this file's own. */
const space = isolation();
type Schema = { notes: { id: number; text: string } };
let db: Kysely<Schema>;
/** A second pool: what another instance of a service would see. */
let other: Kysely<Schema>;

beforeAll(async () => {
  await ensureDatabase(space.databaseUrl);
  db = createDb<Schema>({ url: space.databaseUrl, schema: 'public' });
  other = createDb<Schema>({ url: space.databaseUrl, schema: 'public' });
  await sql`create table notes (id int primary key, text text not null)`.execute(db);
});
afterAll(async () => {
  await db?.destroy();
  await other?.destroy();
  await space.drop();
});

const seenElsewhere = async (id: number) => (await other.selectFrom('notes').select('id').where('id', '=', id).execute()).length;

test('a callback runs once the transaction committed: another connection sees the rows then', async () => {
  const ran: string[] = [];
  let seen: Promise<number> | undefined;
  await transaction(db, async (tx) => {
    await tx.insertInto('notes').values({ id: 1, text: 'one' }).execute();
    afterCommit(tx, () => {
      seen = seenElsewhere(1);
    });
    afterCommit(tx, () => ran.push('second'));
    expect(seen).toBeUndefined();
  });
  expect(ran).toEqual(['second']);
  expect(await seen).toBe(1);
});

test('a transaction that rolls back runs none; one that throws in a callback stays committed and throws', async () => {
  const ran: string[] = [];
  await expect(
    transaction(db, async (tx) => {
      await tx.insertInto('notes').values({ id: 2, text: 'two' }).execute();
      afterCommit(tx, () => ran.push('rolled back'));
      throw new Error('no');
    }),
  ).rejects.toThrow('no');
  expect(ran).toEqual([]);
  expect(await seenElsewhere(2)).toBe(0);

  await expect(
    transaction(db, async (tx) => {
      await tx.insertInto('notes').values({ id: 3, text: 'three' }).execute();
      afterCommit(tx, () => {
        throw new Error('callback');
      });
      afterCommit(tx, () => ran.push('second'));
    }),
  ).rejects.toThrow('callback');
  expect(ran).toEqual(['second']);
  expect(await seenElsewhere(3)).toBe(1);
});

test('outside a transaction a callback runs at once; in a transaction transaction() did not begin, it is refused', async () => {
  const ran: string[] = [];
  afterCommit(db, () => ran.push('now'));
  expect(ran).toEqual(['now']);
  await expect(
    db.transaction().execute(async (tx) => {
      afterCommit(tx, () => ran.push('never'));
    }),
  ).rejects.toThrow(/transaction\(\)/);
  expect(ran).toEqual(['now']);
});

test('whenLockFree: while one transaction holds the lock another answers busy; after it, the lock is free', async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered = () => {};
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const first = whenLockFree(db, 'test.job', 'busy', async () => {
    entered();
    await held;
    return 'first';
  });
  await inside;
  expect(await whenLockFree(other, 'test.job', 'busy', async () => 'second')).toBe('busy');
  // Another key is another lock.
  expect(await whenLockFree(other, 'test.other-job', 'busy', async () => 'other')).toBe('other');
  release();
  expect(await first).toBe('first');
  expect(await whenLockFree(other, 'test.job', 'busy', async () => 'second')).toBe('second');
});
