import { createRequestKeysTable } from '@kn/bus';
import type { Kysely } from 'kysely';

// Requests with an Idempotency-Key take effect once, even when their answer is lost (request-keys.ts in @kn/bus).
export async function up(db: Kysely<unknown>) {
  await createRequestKeysTable(db);
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable('request_keys').execute();
}
