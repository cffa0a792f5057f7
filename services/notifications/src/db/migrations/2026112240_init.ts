import { createBusTables } from '@kn/bus';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>) {
  await createBusTables(db);
  await db.schema
    .createTable('user_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('snapshot', 'jsonb', (c) => c.notNull())
    .addColumn('interface_language', 'text')
    .addColumn('email_settings', 'jsonb')
    .execute();
  await db.schema
    .createTable('network_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('space_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('is_closed', 'boolean', (c) => c.notNull())
    .addColumn('member_ids', sql`integer[]`, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('solution_projection')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('raters', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .execute();
  await db.schema.createIndex('solution_projection_question').on('solution_projection').column('question_id').execute();
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('anonymous', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('icon', 'text', (c) => c.notNull())
    .addColumn('target_object', 'jsonb', (c) => c.notNull())
    .addColumn('event_id', 'uuid', (c) => c.notNull())
    .addColumn('is_read', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_seen', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('notifications_event_receiver', ['event_id', 'user_id'])
    .execute();
  await sql`create index notifications_user on notifications (user_id, created desc, id desc)`.execute(db);
  await sql`create index notifications_user_unread on notifications (user_id) where not is_read`.execute(db);
  await sql`create index notifications_user_unseen on notifications (user_id) where not is_seen`.execute(db);
  await db.schema
    .createTable('email_outbox')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('notification_id', 'integer')
    .addColumn('period', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent', 'timestamptz')
    .execute();
  await sql`create index email_outbox_due on email_outbox (next_attempt) where status = 'pending'`.execute(db);
  // One digest per user and month, whichever instance runs the job.
  await sql`create unique index email_outbox_digest on email_outbox (user_id, period) where kind = 'digest'`.execute(db);
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('event_id', 'uuid', (c) => c.notNull().unique().defaultTo(sql`gen_random_uuid()`))
    .addColumn('notification_id', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered', 'timestamptz')
    .execute();
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>) {
  for (const t of [
    'webhook_deliveries',
    'email_outbox',
    'notifications',
    'solution_projection',
    'space_projection',
    'network_projection',
    'user_projection',
    'processed_events',
    'outbox',
  ])
    await db.schema.dropTable(t).ifExists().execute();
}
