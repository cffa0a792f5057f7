import type { Json } from '@kn/db';
import { type Generated, type Kysely, sql } from 'kysely';

/** The two tables every service needs to take part in the bus, in its own schema. */
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
