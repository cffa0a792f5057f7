import type { Json } from '@kn/db';
import { type Generated, type Kysely, sql } from 'kysely';

/** The tables every service needs to take part in the bus, in its own schema. */
export interface BusTables {
  outbox: {
    position: Generated<number>;
    id: string;
    subject: string;
    payload: Json<unknown>;
    actor_id: number | null;
    occurred_at: Date;
    trace_context: Json<Record<string, string>>;
  };
  processed_events: {
    consumer: string;
    event_id: string;
    processed_at: Generated<Date>;
  };
  /** Requests sent with an Idempotency-Key that changed something (request-keys.ts). */
  request_keys: {
    key: string;
    /** The transaction that recorded the key (its other events record it again). */
    txid: string;
    /** The answer, once sent; null when the process stopped between the change and the answer. */
    reply: string | null;
    created: Generated<Date>;
  };
}

/** Called from each service's first migration. */
export async function createBusTables(db: Kysely<any>) {
  await db.schema
    .createTable('outbox')
    .addColumn('position', 'bigserial', (c) => c.primaryKey())
    .addColumn('id', 'uuid', (c) => c.notNull().unique())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('trace_context', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema
    .createTable('processed_events')
    .addColumn('consumer', 'text', (c) => c.notNull())
    .addColumn('event_id', 'uuid', (c) => c.notNull())
    .addColumn('processed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('processed_events_pk', ['consumer', 'event_id'])
    .execute();
}

/** The request_keys table (a later migration of every service). */
export async function createRequestKeysTable(db: Kysely<any>) {
  await db.schema
    .createTable('request_keys')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('txid', 'text', (c) => c.notNull())
    .addColumn('reply', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('request_keys_created').on('request_keys').column('created').execute();
}
