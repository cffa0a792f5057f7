import { type Kysely, sql } from 'kysely';

// The weekly analytics digest travels through the email outbox with its figures (they come from
// the analytics service, not from this service's tables); one per person and week.
export async function up(db: Kysely<unknown>) {
  await db.schema.alterTable('email_outbox').addColumn('content', 'jsonb').execute();
  await sql`create unique index email_outbox_analytics_digest on email_outbox (user_id, period) where kind = 'analytics_digest'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>) {
  await sql`drop index email_outbox_analytics_digest`.execute(db);
  await db.schema.alterTable('email_outbox').dropColumn('content').execute();
}
