import type { BusTables } from '@kn/bus';
import type { ExportKind, ExportParameters, ExportStatus } from '@kn/contracts';
import type { Json } from '@kn/db';
import type { Generated, Selectable } from 'kysely';

/** One export job: its record (the API's Export record) and what the workers need to run it once. */
export interface ExportJobsTable {
  id: Generated<number>;
  kind: ExportKind;
  status: Generated<ExportStatus>;
  /** Who triggered it. */
  user_id: number;
  /** The network's name when the job was created (file name, XML root). */
  network: string;
  /** The request with its defaults resolved: `{topics}` or `{anonymised, exclude_deleted}`. */
  parameters: Json<ExportParameters>;
  filename: string;
  start_date: Generated<Date>;
  end_date: Date | null;
  file_size: number | null;
  count: number | null;
  message: string | null;
  /** Runs started (a worker that dies leaves its run unfinished; the redelivered job starts another). */
  attempts: Generated<number>;
  /** The object of the current run in the exports bucket; only the run that wrote it may finish the job. */
  object_name: string | null;
  updated: Generated<Date>;
}

export interface ExportsSchema extends BusTables {
  export_jobs: ExportJobsTable;
}

export type ExportJobRow = Selectable<ExportJobsTable>;
