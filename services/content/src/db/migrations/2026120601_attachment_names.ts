import { type Kysely, sql } from 'kysely';
import { BIDI_CONTROLS } from '../../domain/file-names.ts';

/**
 * Names stored before file names were cleaned of bidirectional controls lose them too (what
 * cleanFileName does to a new upload). Nothing to undo: the controls only disguised the names.
 */
export async function up(db: Kysely<any>) {
  await sql`update attachments
    set name = coalesce(nullif(btrim(regexp_replace(name, ${BIDI_CONTROLS}, '', 'g')), ''), 'file')
    where name ~ ${BIDI_CONTROLS}`.execute(db);
}

export async function down(_db: Kysely<any>) {}
