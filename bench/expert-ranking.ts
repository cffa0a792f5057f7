/**
 * Expert search's ranking in one process, over an index a `KEEP_INDEX=1 pnpm bench:search` kept:
 * random questions' texts ranked as `POST /search/experts` ranks them (rankExperts over the local
 * evidence, default weights), once to warm up and once measured. Prints the time and CPU per
 * ranking and the garbage collections it caused; with SAMPLE=1, what it allocated per ranking and
 * where (a sampling heap profile that keeps what collections freed). No HTTP, no other process.
 *
 *   node --max-semi-space-size=4 --heap-growing-percent=20 bench/expert-ranking.ts /tmp/kn-bench-search-<id>/index.sqlite [rankings, 300]
 *
 * (the search service's own V8 flags: services/search/src/main.ts).
 */
import { Session } from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { defaultModel, weightVector } from '../services/search/src/domain/expert-model.ts';
import { rankExperts } from '../services/search/src/domain/experts.ts';
import { LocalEvidence } from '../services/search/src/local/evidence.ts';
import { SearchStore } from '../services/search/src/local/store.ts';

const [path, count = '300'] = process.argv.slice(2);
if (!path) {
  console.error('usage: node bench/expert-ranking.ts <index.sqlite> [rankings]');
  process.exit(2);
}
const store = new SearchStore(path);
const evidence = new LocalEvidence(store);
const questions = store.db
  .prepare('select title, description, language from questions order by random() limit ?')
  .all(Number(count)) as Array<{ title: string; description: string; language: string }>;
const context = { weights: weightVector(defaultModel()), responses: async () => new Map() };
const rankAll = async () => {
  for (const q of questions)
    await rankExperts(evidence, { text: `${q.title}\n${q.description}`, language: q.language, limit: 10 }, context);
};
await rankAll();

const gc = { minor: 0, major: 0, minorMs: 0, majorMs: 0 };
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    // NODE_PERFORMANCE_GC_MINOR is 1 (a scavenge); the rest are full collections' steps.
    const minor = (entry as { detail?: { kind?: number } }).detail?.kind === 1;
    gc[minor ? 'minor' : 'major']++;
    gc[minor ? 'minorMs' : 'majorMs'] += entry.duration;
  }
});
observer.observe({ entryTypes: ['gc'] });
const session = process.env.SAMPLE === '1' ? new Session() : null;
if (session) {
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
const started = performance.now();
const cpu = process.cpuUsage();
await rankAll();
const wall = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
// The observer hears of collections later, in a batch.
await new Promise((resolve) => setTimeout(resolve, 100));
observer.disconnect();
const n = questions.length;
const perCall = (ms: number) => (ms / n).toFixed(3);
console.log(
  `${n} rankings: ${perCall(wall)} ms wall, ${perCall((user + system) / 1000)} ms CPU each; ` +
    `scavenges ${gc.minor} (${perCall(gc.minorMs)} ms each ranking), full collection steps ${gc.major} (${perCall(gc.majorMs)} ms)`,
);
if (session) {
  interface Node {
    callFrame: { functionName: string; url: string; lineNumber: number };
    selfSize: number;
    children: Node[];
  }
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  const bySite = new Map<string, number>();
  let total = 0;
  const visit = (node: Node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.split('/').slice(-3).join('/')}:${lineNumber + 1}`;
    total += node.selfSize;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child);
  };
  visit(profile.head);
  console.log(`allocated about ${(total / n / 1024).toFixed(0)} KiB a ranking; the most, KiB a ranking:`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`${(bytes / n / 1024).toFixed(1).padStart(8)}  ${site}`);
}
