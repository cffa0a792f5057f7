// Content export of a large network: time, file size and peak memory (RSS) of the exports worker,
// for 10,000 and 100,000 questions with three solutions and one comment each (bench/content-seed.ts,
// 5,000 authors), each in a fresh system with users, content, gateway and exports as separate
// processes. Memory should stay flat: the same peak for ten times the questions.
// Run: pnpm bench:exports   (SIZES=10000,100000 by default)
import { readFileSync } from 'node:fs';
import type { ExportRecord } from '@kn/contracts';
import pg from 'pg';
import { seedContent } from './content-seed.ts';
import { benchSpace, login, report, startProcess, stopProcess } from './lib.ts';

const SIZES = (process.env.SIZES ?? '10000,100000').split(',').map(Number);
/** WORKER_HEAP_MB=64: the exports worker runs with that V8 old-space limit (a proof that its memory does not grow with the network). */
const WORKER_HEAP_MB = process.env.WORKER_HEAP_MB;
const PORT = 18092;
const base = `http://127.0.0.1:${PORT}/api/v1`;

/** Resident memory of a process in MiB: now (VmRSS) and its peak since start (VmHWM). */
function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

/** The content schema's users projection: the names the export writes for the seeded authors (ids 2 … 5001). */
/** CPU time (user + system) a process has used, in seconds. */
function cpuSeconds(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function seedAuthors(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`insert into content.user_projection (id, firstname, lastname, content_languages)
      select g, 'First' || g, 'Last' || g, null from generate_series(2, 5001) g on conflict (id) do nothing`);
  } finally {
    await client.end();
  }
}

async function run(questions: number) {
  const space = await benchSpace();
  const { databaseUrl } = space;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_NAMESPACE: space.namespace,
    LOG_LEVEL: 'info',
    ADMIN_PASSWORD: 'bench-admin-password',
    PORT: String(PORT),
    HOST: '127.0.0.1',
    SCRYPT_COST: '1024',
  };
  const users = await startProcess('services/users/src/main.ts', env, 'users service ready');
  const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
  const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
  const exporter = await startProcess(
    'services/exports/src/main.ts',
    WORKER_HEAP_MB ? { ...env, NODE_OPTIONS: `--max-old-space-size=${WORKER_HEAP_MB}` } : env,
    'exports service ready',
  );
  try {
    let started = Date.now();
    await seedContent(databaseUrl, { questions });
    await seedAuthors(databaseUrl);
    console.log(`seeded ${questions} questions, ${questions * 3} solutions in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const admin = await login(base);
    const idle = memory(exporter.pid!);
    const cpu = { worker: cpuSeconds(exporter.pid!), content: cpuSeconds(content.pid!) };

    started = Date.now();
    const created = await admin.call('createContentExport', { body: {} });
    let record: ExportRecord;
    const samples: number[] = [];
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const m = memory(exporter.pid!);
      samples.push(m.rss);
      record = await admin.call('getContentExport', { params: { id: created.export_id } });
      if (record.status !== 'processing') break;
    }
    const seconds = (Date.now() - started) / 1000;
    if (record.status !== 'success') throw new Error(`export failed: ${record.message}`);
    const worker = memory(exporter.pid!);
    // The worker's RSS at each tenth of the run: flat means no growth from the first tenth to the last.
    const tenths = Array.from(
      { length: 10 },
      (_, i) => samples[Math.min(samples.length - 1, Math.floor(((i + 1) * samples.length) / 10) - 1)],
    );
    console.log(`${questions} questions: worker RSS (MiB) at each tenth of the run: ${tenths.join(' ')}`);
    const contentMemory = memory(content.pid!);
    return {
      questions,
      'worker heap limit MiB': WORKER_HEAP_MB ? Number(WORKER_HEAP_MB) : 'default',
      solutions: questions * 3,
      exported: record.count,
      seconds: Number(seconds.toFixed(1)),
      'job seconds (end_date - start_date)': Number(
        ((Date.parse(record.end_date ?? record.start_date) - Date.parse(record.start_date)) / 1000).toFixed(1),
      ),
      'zip MiB': Number(((record.file_size ?? 0) / 1024 / 1024).toFixed(1)),
      'worker RSS idle MiB': idle.rss,
      'worker RSS mean MiB': Math.round(samples.reduce((a, b) => a + b, 0) / samples.length),
      'worker RSS peak MiB': worker.peak,
      'content RSS peak MiB': contentMemory.peak,
      'worker CPU s': Number((cpuSeconds(exporter.pid!) - cpu.worker).toFixed(1)),
      'content CPU s': Number((cpuSeconds(content.pid!) - cpu.content).toFixed(1)),
    };
  } finally {
    await stopProcess(exporter);
    await stopProcess(gateway);
    await stopProcess(content);
    await stopProcess(users);
    await space.drop();
  }
}

const rows = [];
for (const size of SIZES) rows.push(await run(size));
report(
  'Content export (zipped XML), three solutions and one comment per question',
  `${WORKER_HEAP_MB ? `WORKER_HEAP_MB=${WORKER_HEAP_MB} ` : ''}${process.env.SIZES ? `SIZES=${process.env.SIZES} ` : ''}pnpm bench:exports`,
  rows,
);
console.log('target: 100,000 questions in under 2 minutes, worker memory flat (10,000 vs 100,000)');
