/**
 * Question search's ranking in one process, over an index a `KEEP_INDEX=1 pnpm bench:search` kept:
 * the same queries (words of the network's titles, as bench:search asks them) ranked question at a
 * time with skipping (as served) and by scoring every posting, alternated, with the results
 * compared, and the page's highlighting after the ranking as served. No HTTP, no other process:
 * the CPU per query of the ranking and of the highlighting alone.
 *
 *   node bench/text-ranking.ts /tmp/kn-bench-search-<id>/index.sqlite [queries per size, 300]
 *
 * PROFILE=<file.cpuprofile> writes a CPU profile of the queries (not of opening the index), for
 * `node bench/profile.ts`; WAYS=skipping ranks only as served (a profile of the served path alone).
 * The queries are the same in every run over one index (SEED=<n> for others), so that two versions
 * of the code compare on the same queries.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { SearchFieldNames } from '@kn/contracts';
import { tokenize } from '@kn/similarity';
import { highlight } from '../services/search/src/local/highlight.ts';
import { matchQuestions } from '../services/search/src/local/match.ts';
import { SearchStore } from '../services/search/src/local/store.ts';

const [path, count = '300'] = process.argv.slice(2);
if (!path) {
  console.error('usage: node bench/text-ranking.ts <index.sqlite> [queries per size]');
  process.exit(2);
}
let started = performance.now();
const store = new SearchStore(path);
console.log(`opened ${store.documentCount} questions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
let seed = Number(process.env.SEED ?? 1);
const random = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
// 2,000 titles spread over the network, the same ones in every run with this seed.
const titles = store.db.prepare('select title from questions order by (id * 2654435761 + ?) % 4294967296 limit 2000').all(seed) as Array<{
  title: string;
}>;
const words = [...new Set(titles.flatMap((t) => tokenize(t.title, { stem: false })).filter((w) => w.length >= 4 && !/\d/.test(w)))];
const pick = () => words[Math.floor(random() * words.length)]!;
const request = (query: string) => ({
  query,
  operator: 'OR' as const,
  fields: [...SearchFieldNames],
  stop_languages: ['en'],
  filter: { tag_operator: 'AND' as const, include_uncategorized: false, include_deleted: false },
  offset: 0,
  limit: 10,
});

const profiler = process.env.PROFILE ? new Session() : null;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
const percentile = (served: Array<{ ms: number }>, p: number) => {
  const sorted = served.map((q) => q.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};
const ways = (process.env.WAYS === 'skipping' ? ['skipping'] : ['every', 'skipping']) as Array<'skipping' | 'every'>;
const rows: Array<Record<string, string | number>> = [];
for (const n of (process.env.SIZES ?? '1,2,4').split(',').map(Number)) {
  const queries = Array.from({ length: Number(count) }, () => Array.from({ length: n }, pick).join(' '));
  const time = { skipping: 0, every: 0, highlighting: 0 };
  let differing = 0;
  let skipped = 0;
  /** Each query's time as served (ranking and highlighting), for the slowest: one slow query holds up every request behind it. */
  const served: Array<{ ms: number; query: string }> = [];
  for (const [i, query] of queries.entries()) {
    // Alternate which goes first, so neither gets the warmer caches.
    const order = ways.length > 1 && i % 2 ? ways.toReversed() : ways;
    const results: Record<string, unknown> = {};
    // One read-ahead for the ranking and the page's highlighting, as a query search answers.
    for (const way of order)
      store.index.withWordsOf([], () => {
        started = performance.now();
        const result = matchQuestions(store, request(query), way === 'skipping' ? {} : { atATimeWords: 0 });
        const ms = performance.now() - started;
        time[way] += ms;
        results[way] = result;
        if (way !== 'skipping') return;
        if (result.words.every((w) => !w.forms.length)) skipped++;
        started = performance.now();
        highlight(
          store,
          result.items.map((item) => item.id),
          request(query),
          result.words,
        );
        time.highlighting += performance.now() - started;
        served.push({ ms: ms + performance.now() - started, query });
      });
    if (ways.length > 1 && JSON.stringify(results.skipping) !== JSON.stringify(results.every)) differing++;
  }
  rows.push({
    words: n,
    queries: queries.length,
    'whole words only': skipped,
    'ms per query, skipping': (time.skipping / queries.length).toFixed(2),
    'ms per query, every posting': (time.every / queries.length).toFixed(2),
    'ms per page, highlighting': (time.highlighting / queries.length).toFixed(3),
    'ms as served, p99 / slowest': `${percentile(served, 0.99).toFixed(1)} / ${percentile(served, 1).toFixed(1)}`,
    'results differing': differing,
  });
  served.sort((a, b) => b.ms - a.ms);
  console.log(
    `slowest ${n}-word queries: ${served
      .slice(0, 3)
      .map((q) => `"${q.query}" ${q.ms.toFixed(1)} ms`)
      .join(', ')}`,
  );
}
if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(process.env.PROFILE!, JSON.stringify(profile));
}
console.table(rows);
console.log(`command: node bench/text-ranking.ts ${path} ${count}`);
store.close();
