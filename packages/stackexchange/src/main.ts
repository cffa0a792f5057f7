// pnpm import:stackexchange <dump folder> [--language en] [--state <dir>]
// Imports a Stack Exchange data dump into the running system (docs/import.md).
import { connectBus } from '@kn/bus';
import { BaseConfig, parseConfig } from '@kn/service';
import { createLogger } from '@kn/telemetry';
import { z } from 'zod';
import { DumpError, formatSummary, importDump } from './importer.ts';
import { progressBar } from './progress.ts';

const ImportConfig = BaseConfig.extend({
  /** Where the checkpoint of an unfinished import is kept (default: the system's temporary folder). */
  IMPORT_STATE_DIR: z.string().optional(),
});

function argument(args: string[], name: string) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
}

const args = process.argv.slice(2);
const language = argument(args, '--language') ?? 'en';
const stateOption = argument(args, '--state');
const dir = args[0];
if (!dir || args.length > 1 || !/^[a-z]{2}$/.test(language)) {
  console.error('usage: pnpm import:stackexchange <dump folder> [--language en] [--state <checkpoint folder>]');
  process.exit(2);
}
const config = parseConfig(ImportConfig);
const logger = createLogger('import', config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
const bar = progressBar(process.stderr);
let bus: Awaited<ReturnType<typeof connectBus>> | undefined;
try {
  bus = await connectBus({
    url: config.NATS_URL,
    user: config.NATS_USER,
    password: config.NATS_PASSWORD,
    namespace: config.NATS_NAMESPACE,
    name: 'import-stackexchange',
    logger,
  });
  const summary = await importDump({
    dir,
    bus,
    language,
    stateDir: stateOption ?? config.IMPORT_STATE_DIR,
    target: `${config.NATS_URL} ${config.NATS_NAMESPACE}`,
    progress: bar.update,
  });
  bar.done();
  console.log(formatSummary(summary));
  // maxRSS is in KiB: the figure the benchmark (bench/import.ts) compares between dump sizes.
  console.log(`  peak memory (RSS) of this command: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  await bus.close();
  process.exit(0);
} catch (err) {
  bar.done();
  if (err instanceof DumpError) console.error(`import stopped: ${err.message}`);
  else
    console.error(
      `import stopped: ${(err as Error).message}\n(run the same command again to continue from the last checkpoint; is the system up? NATS_URL=${config.NATS_URL})`,
    );
  await bus?.close().catch(() => {});
  process.exit(1);
}
