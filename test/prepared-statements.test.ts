import { createDb, ensureDatabase, sql } from '@kn/db';
import { isolation } from '@kn/testing';
import type { Kysely } from 'kysely';
import pg from 'pg';

/**
 * Connections of createDb (packages/db): they prepare the statements they run again (reused, and
 * still right when a table changes under them), and their planner reads a small table by its key.
 */
const space = isolation();
let db: Kysely<unknown>;

beforeAll(async () => {
  await ensureDatabase(space.databaseUrl);
  db = createDb({ url: space.databaseUrl, schema: 'probe', poolSize: 1 });
  await sql`create schema probe`.execute(db);
  await sql`create table items (id int primary key, label text not null)`.execute(db);
  await sql`insert into items values (1, 'one'), (2, 'two')`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await space.drop();
});

test('a statement run again is prepared once on its connection', async () => {
  for (const id of [1, 2, 1]) await sql`select label from items where id = ${id}`.execute(db);
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  expect(rows.filter((r) => r.statement.startsWith('select label from items')).length).toBe(1);
});

test('a statement that locks rows is not prepared (a queue read by SKIP LOCKED drained 40% slower prepared)', async () => {
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < 3; i++) await sql`select id from items order by id limit ${1} for update skip locked`.execute(tx);
  });
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  expect(rows.filter((r) => r.statement.includes('for update skip locked'))).toEqual([]);
});

test('several statements in one text still run, again and again', async () => {
  for (let i = 0; i < 3; i++) await sql`update items set label = label || '!' where id = 2; select 1`.execute(db);
  expect((await sql<{ label: string }>`select label from items where id = ${2}`.execute(db)).rows).toEqual([{ label: 'two!!!' }]);
});

/** Another process migrates (a rolling upgrade). */
async function migrateElsewhere(statement: string) {
  const other = new pg.Client({ connectionString: space.databaseUrl });
  await other.connect();
  try {
    await other.query(statement);
  } finally {
    await other.end();
  }
}

test('a table that changes under a prepared statement still answers it, with the new column', async () => {
  const read = () => sql<Record<string, unknown>>`select * from items where id = ${1}`.execute(db);
  await read();
  await read();
  await migrateElsewhere(`alter table probe.items add column note text not null default 'n'`);
  expect((await read()).rows).toEqual([{ id: 1, label: 'one', note: 'n' }]);
  expect((await read()).rows).toEqual([{ id: 1, label: 'one', note: 'n' }]);
});

test('inside a transaction the refusal fails the transaction, and the statement answers again after it', async () => {
  const read = (executor: Kysely<unknown>) => sql<Record<string, unknown>>`select id, label from items where id = ${1}`.execute(executor);
  await read(db);
  await read(db);
  await migrateElsewhere('alter table probe.items alter column label type varchar(50)');
  await expect(db.transaction().execute((tx) => read(tx))).rejects.toMatchObject({ code: '0A000' });
  expect((await read(db)).rows).toEqual([{ id: 1, label: 'one' }]);
});

test('a row of a small table is read by its key, not by scanning the table (a page of questions reads each tag label so)', async () => {
  await sql`create table labels (id uuid primary key default gen_random_uuid(), label text not null)`.execute(db);
  await sql`insert into labels (label) select 'label ' || g from generate_series(1, 200) g`.execute(db);
  await sql`analyze labels`.execute(db);
  const { rows } = await sql<{
    'QUERY PLAN': string;
  }>`explain select label from labels where id = ${'00000000-0000-4000-8000-000000000001'}::uuid`.execute(db);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  expect(plan).toMatch(/Index (Only )?Scan using labels_pkey/);
});
