import { serveOperations } from '@kn/bus';
import { exportsOperations } from '@kn/contracts';
import { serviceParts, startRuntime } from '@kn/service';
import type { ExportsConfig } from './config.ts';
import { migrations } from './db/migrations/index.ts';
import type { ExportsSchema } from './db/schema.ts';
import { exportFiles } from './domain/files.ts';
import { createHandlers } from './handlers/index.ts';
import { startExportWorker } from './jobs/export-worker.ts';

export { ExportsConfig, loadConfig } from './config.ts';
export { CONTENT_EXPORT_NAMESPACE, CONTENT_EXPORT_XSD } from './domain/xsd.ts';
export { WORKER_DURABLE } from './jobs/export-worker.ts';

/** Starts the exports service: export jobs and their API, the workers that write the files. */
export async function start(config: ExportsConfig) {
  const runtime = await startRuntime<ExportsSchema>({ service: 'exports', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    runtime.metrics.gauge('kn_export_jobs', 'Export jobs by status (processing: the queue)', ['status'], async (set) => {
      const rows = await db
        .selectFrom('export_jobs')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      for (const status of ['processing', 'success', 'error']) set({ status }, Number(rows.find((r) => r.status === status)?.n ?? 0));
    });
    const files = exportFiles(bus, logger);
    const schema = await files.ensureSchema();
    // Stopping hands the jobs under way back to other instances.
    const worker = parts.add(await startExportWorker({ bus, db, config, logger, files }));
    parts.add(
      serveOperations({
        bus,
        service: 'exports',
        requestKeys: runtime.requestKeys,
        operations: exportsOperations,
        handlers: createHandlers({ db, bus, schema }),
      }),
    );
    logger.info('exports service ready');
    return { runtime, worker, stop: parts.stop };
  });
}
