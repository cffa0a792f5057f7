import { createBusTables } from '@kn/bus';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
}

export async function down(db: Kysely<any>) {
  for (const t of ['processed_events', 'outbox']) await db.schema.dropTable(t).execute();
}
