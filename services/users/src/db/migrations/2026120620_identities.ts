import { type Kysely, sql } from 'kysely';

/** Single sign-on (docs/sso.md): which account a person of an identity provider (issuer and subject) signs in to. */
export async function up(db: Kysely<any>) {
  await db.schema
    .createTable('identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('identities_user').on('identities').column('user_id').execute();
}

export async function down(db: Kysely<any>) {
  await db.schema.dropTable('identities').execute();
}
