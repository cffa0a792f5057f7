import { writeEvent } from '@kn/bus';
import { conflict, type ExportKind, type ExportParameters, type ExportRecord, notFound } from '@kn/contracts';
import { type Db, type Executor, json } from '@kn/db';
import type { Transaction } from 'kysely';
import type { ExportJobRow, ExportsSchema } from '../db/schema.ts';
import { exportFilename } from './format.ts';

export const MIME_TYPES: Record<ExportKind, string> = {
  topic_content: 'text/csv; charset=UTF-16LE',
  content: 'application/zip',
};

export function presentExport(row: ExportJobRow): ExportRecord {
  return {
    export_id: row.id,
    status: row.status,
    start_date: row.start_date.toISOString(),
    end_date: row.end_date?.toISOString() ?? null,
    file_size: row.file_size === null ? null : Number(row.file_size),
    count: row.count,
    filename: row.filename,
    message: row.message,
    user_id: row.user_id,
  };
}

const eventOf = (row: ExportJobRow) => ({ export: presentExport(row), kind: row.kind, parameters: row.parameters });

/** Creates the job and its `requested` event in one transaction: the job exists exactly when a worker can get it. */
export async function createJob(
  db: Db<ExportsSchema>,
  input: { kind: ExportKind; userId: number; network: string; parameters: ExportParameters },
) {
  return db.transaction().execute(async (tx) => {
    const start = new Date();
    const row = await tx
      .insertInto('export_jobs')
      .values({
        kind: input.kind,
        user_id: input.userId,
        network: input.network,
        parameters: json(input.parameters),
        filename: exportFilename(input.kind, input.network, start),
        start_date: start,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await writeEvent(tx, 'exports.export.requested.v1', eventOf(row), { actorId: input.userId });
    return presentExport(row);
  });
}

export async function listJobs(db: Db<ExportsSchema>, kind: ExportKind) {
  const rows = await db.selectFrom('export_jobs').selectAll().where('kind', '=', kind).orderBy('id', 'desc').execute();
  return rows.map(presentExport);
}

export async function findJob(ex: Executor<ExportsSchema>, kind: ExportKind, id: number) {
  const row = await ex.selectFrom('export_jobs').selectAll().where('id', '=', id).where('kind', '=', kind).executeTakeFirst();
  if (!row) throw notFound('export');
  return row;
}

/** Where the gateway finds the file: only once the export succeeded (409 Conflict before, and after an error). */
export async function jobFile(db: Db<ExportsSchema>, kind: ExportKind, id: number) {
  const row = await findJob(db, kind, id);
  if (row.status !== 'success' || !row.object_name || row.file_size === null)
    throw conflict(
      row.status === 'error'
        ? `export ${id} failed: ${row.message ?? 'no file'}`
        : `export ${id} is still processing; its file is not ready`,
    );
  return {
    object: row.object_name,
    name: row.filename,
    mime_type: MIME_TYPES[kind],
    size: Number(row.file_size),
    bucket: 'exports' as const,
  };
}

/**
 * Starts a run of a processing job: counts it and records the object it will write. Returns null
 * when the job is no longer processing (a redelivered message of a finished job).
 */
export async function claimRun(db: Db<ExportsSchema>, id: number, object: string) {
  return db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('export_jobs').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (row?.status !== 'processing') return null;
    const claimed = await tx
      .updateTable('export_jobs')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), object_name: object, updated: new Date() }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { job: claimed, previousObject: row.object_name };
  });
}

/**
 * Finishes a run: only the run that owns the job's current object moves it out of processing,
 * once, with its event. Returns false when another run got there first (its file is the one).
 */
export async function finishRun(db: Db<ExportsSchema>, id: number, object: string, result: { size: number; count: number }) {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('export_jobs')
      .set({ status: 'success', end_date: new Date(), file_size: result.size, count: result.count, message: null, updated: new Date() })
      .where('id', '=', id)
      .where('status', '=', 'processing')
      .where('object_name', '=', object)
      .returningAll()
      .executeTakeFirst();
    if (row) await writeEvent(tx as Transaction<ExportsSchema>, 'exports.export.succeeded.v1', eventOf(row), { actorId: null });
    return row !== undefined;
  });
}

/** Marks a processing job failed, once, with its event; with `object`, only if that run still owns the job. */
export async function failJob(db: Db<ExportsSchema>, id: number, message: string, object?: string) {
  return db.transaction().execute(async (tx) => {
    let update = tx
      .updateTable('export_jobs')
      .set({ status: 'error', message: message.slice(0, 2000), updated: new Date() })
      .where('id', '=', id)
      .where('status', '=', 'processing');
    if (object) update = update.where('object_name', '=', object);
    const row = await update.returningAll().executeTakeFirst();
    if (row) await writeEvent(tx, 'exports.export.failed.v1', eventOf(row), { actorId: null });
    return row;
  });
}
