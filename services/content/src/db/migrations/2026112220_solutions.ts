import type { Kysely } from 'kysely';

export async function up(_db: Kysely<any>) {}

export async function down(_db: Kysely<any>) {}
