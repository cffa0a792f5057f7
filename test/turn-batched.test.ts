import { createDb, ensureDatabase, sql, turnBatched } from '@kn/db';
import { isolation } from '@kn/testing';
import type { Kysely } from 'kysely';

/** Reads of one event-loop turn become one query (packages/db), each caller answered with its own row. */
const space = isolation();
let db: Kysely<unknown>;

beforeAll(async () => {
  await ensureDatabase(space.databaseUrl);
  db = createDb({ url: space.databaseUrl, schema: 'probe', poolSize: 2 });
  await sql`create schema probe`.execute(db);
  await sql`create table items (id int primary key, label text not null)`.execute(db);
  await sql`insert into items select i, 'item ' || i from generate_series(1, 50) i`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await space.drop();
});

function itemsReader() {
  const reads: number[][] = [];
  const read = turnBatched(async (ids: number[]) => {
    reads.push(ids);
    const { rows } = await sql<{ id: number; label: string }>`select id, label from items where id = any(${ids}::int[])`.execute(db);
    return new Map(rows.map((r) => [r.id, r.label]));
  });
  return { read, reads };
}

test('the keys of one turn are read by one query, each caller getting its own value', async () => {
  const { read, reads } = itemsReader();
  const asked = [7, 3, 42, 7, 999, 1, 3];
  const labels = await Promise.all(asked.map((id) => read(id)));
  expect(labels).toEqual(['item 7', 'item 3', 'item 42', 'item 7', undefined, 'item 1', 'item 3']);
  expect(reads).toEqual([[7, 3, 42, 999, 1]]);
});

test('a key asked after the turn is read by a query of its own', async () => {
  const { read, reads } = itemsReader();
  expect(await read(5)).toBe('item 5');
  expect(await Promise.all([read(6), read(5)])).toEqual(['item 6', 'item 5']);
  expect(reads).toEqual([[5], [6, 5]]);
});

test('a read that fails fails every caller of its turn, and the next turn reads again', async () => {
  let fail = true;
  const read = turnBatched(async (ids: number[]) => {
    if (fail) await sql`select 1 / 0`.execute(db);
    const { rows } = await sql<{ id: number; label: string }>`select id, label from items where id = any(${ids}::int[])`.execute(db);
    return new Map(rows.map((r) => [r.id, r.label]));
  });
  const failed = await Promise.allSettled([read(1), read(2)]);
  expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect((failed[0] as PromiseRejectedResult).reason.message).toMatch(/division by zero/);
  fail = false;
  expect(await Promise.all([read(1), read(2)])).toEqual(['item 1', 'item 2']);
});
