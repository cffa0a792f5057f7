import { type Kysely, sql } from 'kysely';

/**
 * The expert models the network's fits produced (the latest is in force), and who each routing
 * went to, when, and when they answered: what the routing cap counts and the model learns from.
 */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('expert_models')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('model', 'jsonb', (c) => c.notNull())
    .addColumn('answered', 'integer', (c) => c.notNull())
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('routed_experts')
    .addColumn('routing_id', 'integer', (c) => c.notNull().references('routings.id').onDelete('cascade'))
    .addColumn('question_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('routed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('answered_at', 'timestamptz')
    .addPrimaryKeyConstraint('routed_experts_pkey', ['routing_id', 'user_id'])
    .execute();
  await db.schema.createIndex('routed_experts_user').on('routed_experts').columns(['user_id', 'routed_at']).execute();
  await db.schema.createIndex('routed_experts_question').on('routed_experts').columns(['question_id', 'user_id']).execute();
  // Routings made before this table existed.
  await sql`insert into routed_experts (routing_id, question_id, user_id, routed_at)
    select r.id, r.question_id, (e->>'user_id')::int, r.created from routings r, jsonb_array_elements(r.experts) e
    on conflict do nothing`.execute(db);
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('routed_experts').execute();
  await db.schema.dropTable('expert_models').execute();
}
