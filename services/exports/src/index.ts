import { serveOperations } from '@kn/bus';
import { exportsOperations } from '@kn/contracts';
import { startRuntime } from '@kn/service';
import type { ExportsConfig } from './config.ts';
import { startExportWorker } from './consumers/requested.ts';
import { migrations } from './db/migrations/index.ts';
import type { ExportsSchema } from './db/schema.ts';
import { exportFiles } from './domain/files.ts';
import { createHandlers } from './handlers/index.ts';

export { ExportsConfig, loadConfig } from './config.ts';
export { WORKER_DURABLE } from './consumers/requested.ts';
export { CONTENT_EXPORT_NAMESPACE, CONTENT_EXPORT_XSD } from './domain/xsd.ts';

/** Starts the exports service: export jobs and their API, the workers that write the files. */
export async function start(config: ExportsConfig) {
  const runtime = await startRuntime<ExportsSchema>({ service: 'exports', config, migrations });
  const { db, bus, logger } = runtime;
  runtime.metrics.gauge('kn_export_jobs', 'Export jobs by status (processing: the queue)', ['status'], async (set) => {
    const rows = await db
      .selectFrom('export_jobs')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    for (const status of ['processing', 'success', 'error']) set({ status }, Number(rows.find((r) => r.status === status)?.n ?? 0));
  });
  try {
    const files = exportFiles(bus, logger);
    const schema = await files.ensureSchema();
    const worker = await startExportWorker({ bus, db, config, logger, files });
    const rpc = serveOperations({
      bus,
      service: 'exports',
      requestKeys: runtime.requestKeys,
      operations: exportsOperations,
      handlers: createHandlers({ db, bus, schema }),
    });
    logger.info('exports service ready');
    let stopping: Promise<void> | undefined;
    return {
      runtime,
      worker,
      /** Stops taking requests and jobs; jobs under way are handed back to other instances. Idempotent. */
      stop: () => {
        stopping ??= (async () => {
          try {
            await rpc.stop();
            await worker.stop();
          } finally {
            await runtime.stop();
          }
        })();
        return stopping;
      },
    };
  } catch (err) {
    await runtime.stop().catch(() => {});
    throw err;
  }
}
