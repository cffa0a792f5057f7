// What the sentence encoder costs, in figures a busy shared machine does not blur (issue 61): CPU
// time of the whole process around embed() alone (bench/encoder.ts), many repetitions, and resident
// memory. Each model folder and setting runs in a child process of its own, so that its RSS is its own.
//
// - Queries: unique texts of 1, 2 and 4 words and whole titles (SemEval-2016 subjects, cut), one
//   at a time as a search request asks them: CPU ms a query, and wall ms p50 / p99 (wall depends on
//   what else the machine runs; CPU far less).
// - Passages: the SemEval texts (subject + body, 737 texts, up to 256 tokens) in calls of 8 as the
//   backfill makes them: texts per CPU second and per wall second.
// - RSS over a bare process: with the model loaded, after the queries, after the passages.
//
// Run: pnpm bench:encoder-cost (MODELS=folder,… THREADS=1,2 BATCHES=1,2 QUERIES=200; the
// manifest's batch size unless BATCHES names others)
import { spawnSync } from 'node:child_process';
import { defaultModelPath } from '../packages/embedding/src/index.ts';
import { benchData } from './data.ts';
import { costText, passageRate, queryCost, withEncoder } from './encoder.ts';
import { report } from './lib.ts';
import { semevalOriginals } from './retrieval-data.ts';

const QUERIES = Number(process.env.QUERIES ?? 200);
const rss = () => process.memoryUsage().rss / 2 ** 20;

interface Setting {
  folder: string;
  threads: number;
  batchSize?: number;
}

async function measure({ folder, threads, batchSize }: Setting) {
  const bare = rss();
  const originals = semevalOriginals();
  const subjects = [...new Set(originals.flatMap((o) => [o.subject, ...o.related.map((r) => r.subject)]))];
  const words = (n: number) => [...new Set(subjects.map((s) => s.split(/\s+/).filter(Boolean).slice(0, n).join(' ')))];
  const passages = new Map<string, string>();
  for (const o of originals) {
    passages.set(o.id, `${o.subject}\n${o.body}`);
    for (const r of o.related) passages.set(r.id, `${r.subject}\n${r.body}`);
  }
  return withEncoder({ path: folder, threads, batchSize }, async (embedder, loaded) => {
    const row: Record<string, string | number> = { model: embedder.model, threads, batch: batchSize ?? 'manifest' };
    for (const [label, texts] of [
      ['1 word', words(1)],
      ['2 words', words(2)],
      ['4 words', words(4)],
      ['title', subjects],
    ] as const)
      row[`${label}: CPU ms / wall p50 / p99`] = costText(await queryCost(embedder, texts.slice(0, QUERIES)));
    const afterQueries = rss() - bare;
    const rate = await passageRate(embedder, [...passages.values()]);
    row['passages: texts / CPU s'] = rate.perCpuSecond.toFixed(1);
    row['passages: texts / s'] = rate.perSecond.toFixed(1);
    row['RSS MiB over bare: loaded / queries / passages'] =
      `${Math.round(loaded)} / ${Math.round(afterQueries)} / ${Math.round(rss() - bare)}`;
    return row;
  });
}

if (process.argv[2] === '--one') {
  console.log(JSON.stringify(await measure(JSON.parse(process.argv[3]!) as Setting)));
} else {
  benchData('semeval2016-task3');
  const folders = process.env.MODELS ? process.env.MODELS.split(',') : [defaultModelPath()];
  const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map(Number);
  const batches = process.env.BATCHES ? list('BATCHES', '') : [undefined];
  const rows: Record<string, unknown>[] = [];
  for (const folder of folders)
    for (const threads of list('THREADS', '1,2'))
      for (const batchSize of batches) {
        const setting: Setting = { folder, threads, batchSize };
        const child = spawnSync(process.execPath, [process.argv[1]!, '--one', JSON.stringify(setting)], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const line = child.stdout.trim().split('\n').at(-1);
        if (child.status !== 0 || !line?.startsWith('{')) throw new Error(`${folder}: the measurement failed (exit ${child.status})`);
        rows.push(JSON.parse(line));
        console.log(line);
      }
  report(
    'What the sentence encoder costs (CPU of the whole process around embed(), RSS over a bare process)',
    'pnpm bench:encoder-cost',
    rows,
  );
}
