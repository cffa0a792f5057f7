import { type Kysely, sql } from 'kysely';
import { searchTextWithoutEmail } from '../../domain/search.ts';

/** What callers who see emails disguised search in: search_text without the email's words. */
export async function up(db: Kysely<any>) {
  await db.schema
    .alterTable('users')
    .addColumn('search_text_without_email', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  for (let after = 0; ; ) {
    const rows = await db
      .selectFrom('users')
      .select(['id', 'firstname', 'lastname', 'customfields'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (!rows.length) break;
    await sql`
      update users set search_text_without_email = v.text
      from unnest(${rows.map((r) => r.id)}::int[], ${rows.map(searchTextWithoutEmail)}::text[]) as v(id, text)
      where users.id = v.id`.execute(db);
    after = rows.at(-1)!.id;
  }
  await sql`alter table users alter column search_text_without_email drop default`.execute(db);
  await sql`create index users_search_text_without_email on users using gin (search_text_without_email public.gin_trgm_ops)`.execute(db);
}

export async function down(db: Kysely<any>) {
  await db.schema.alterTable('users').dropColumn('search_text_without_email').execute();
}
