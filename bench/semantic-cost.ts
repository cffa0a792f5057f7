// What meaning adds to a search request (issue 49), at each of SIZES vectors (100,000 by default;
// SIZES=100000,1000000 for a million too; QUESTIONS=n is one size): the vectors' memory and load
// rate in the search process's VectorIndex, the build of its partition (inverted lists, from 50,000
// vectors on), the cosine of question search's 50 best with the query, the nearest-neighbour search
// (similar questions; question search with fewer than 10 text matches) with its recall@10 against an
// exact scan of the int8 vectors, and embedding a query with the set-up's model
// (infra/ensure-model.sh; EMBED=0 leaves it out).
// The vectors are synthetic but clustered as questions are, since a partition's recall depends on
// it: 50 areas of 20 topics, subjects of PER_SUBJECT questions on average, each vector
// unit(topic + 0.8 subject + noise) of unit-length Gaussian directions: cosines about 0.62 within a
// subject, 0.38 within a topic, 0.19 within an area, 0 across. The queries are new vectors of the
// same kind. (The generator before this one, an LCG in floating point, repeated itself every 10,466
// numbers, so that its vectors repeated too: its recall@10 of 1.000 said little.)
// Run: pnpm bench:semantic-cost
import { openEmbedder, quantize } from '@kn/embedding';
import { mulberry32 } from '@kn/similarity';
import { VectorIndex } from '../services/search/src/semantic/vectors.ts';
import { report } from './lib.ts';

const SIZES = (process.env.SIZES ?? process.env.QUESTIONS ?? '100000').split(',').map(Number);
const QUERIES = Number(process.env.QUERIES ?? 50);
const DIMENSIONS = 384;
const TOPICS = 1000;
const AREAS = 50;
/** Questions a subject on average. */
const PER_SUBJECT = Number(process.env.PER_SUBJECT ?? 10);

// mulberry32 and Box-Muller: the same vectors on every machine.
const noise = mulberry32(42);
const direction = (uniform: () => number) => {
  const v = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) v[i] = Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return unit(v);
};
const unit = (v: Float32Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
};
const areas = Array.from({ length: AREAS }, (_, a) => direction(mulberry32(-1 - a)));
const topics = Array.from({ length: TOPICS }, (_, t) => unit(direction(mulberry32(t)).map((x, d) => x + areas[t % AREAS]![d]!)));
/** Question i of `size`: its subject's and topic's directions (a subject is a seed: no table of them) and noise. */
const vectorOf = (i: number, size: number) => {
  const subject = (i * 7919) % Math.ceil(size / PER_SUBJECT);
  const topic = topics[subject % TOPICS]!;
  const near = direction(mulberry32(TOPICS + subject));
  const v = direction(noise);
  for (let d = 0; d < DIMENSIONS; d++) v[d] = topic[d]! + 0.8 * near[d]! + v[d]!;
  return unit(v);
};

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const rss = () => process.memoryUsage().rss / 2 ** 20;
const balance = (sizes: Int32Array) => (sizes.length ? `${percentile([...sizes], 0.5)} / ${Math.max(...sizes)}` : '-');
const ms = (xs: number[]) => `${percentile(xs, 0.5).toFixed(2)} / ${percentile(xs, 0.99).toFixed(2)}`;

for (const size of SIZES) {
  const before = rss();
  const index = new VectorIndex(DIMENSIONS);
  let started = performance.now();
  for (let i = 0; i < size; i++) index.put(i, quantize(vectorOf(i, size)));
  const loadSeconds = (performance.now() - started) / 1000;
  const memory = rss() - before;
  started = performance.now();
  index.buildPartition();
  const buildSeconds = (performance.now() - started) / 1000;
  // The lists hold the sketches once the partition is built, and the array of them by slot is let go.
  const partitioned = rss() - before;

  const queries = Array.from({ length: QUERIES }, (_, i) => vectorOf(size + i, size));
  const cosines: number[] = [];
  const nearest: number[] = [];
  const nearestCpu: number[] = [];
  let found = 0;
  for (const q of queries) {
    started = performance.now();
    for (let k = 0; k < 50; k++) index.cosine((k * 7919) % size, q);
    cosines.push(performance.now() - started);
    started = performance.now();
    const cpu = process.cpuUsage();
    const got = new Set(index.nearest(q, 10).map((n) => n.id));
    nearest.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    nearestCpu.push((used.user + used.system) / 1000);
    const exact = new Float32Array(size);
    for (let id = 0; id < size; id++) exact[id] = index.cosine(id, q)!;
    const tenth = [...exact].sort((a, b) => b - a)[9]!;
    for (const id of got) if (exact[id]! >= tenth) found++;
  }
  report(`Meaning in a search request at ${size} questions (${queries.length} queries)`, `SIZES=${size} pnpm bench:semantic-cost`, [
    { what: 'vectors in memory (MiB, RSS growth)', value: memory.toFixed(0) },
    { what: 'vectors loaded a second', value: Math.round(size / loadSeconds) },
    { what: 'partition: lists (0: every sketch scanned)', value: index.partitionLists },
    { what: 'partition: vectors a list, median / largest', value: balance(index.listSizes()) },
    { what: 'partition: build, s (in 5 ms slices in the service)', value: buildSeconds.toFixed(1) },
    { what: 'vectors and partition in memory (MiB, RSS growth)', value: partitioned.toFixed(0) },
    { what: 'cosine of 50 best text matches, ms p50 / p99', value: ms(cosines) },
    { what: 'nearest 10 by meaning, ms p50 / p99', value: ms(nearest) },
    { what: 'nearest 10 by meaning, CPU ms p50 / p99', value: ms(nearestCpu) },
    { what: 'nearest 10: recall@10 against an exact scan', value: (found / (10 * queries.length)).toFixed(3) },
  ]);
}

if (process.env.EMBED !== '0') {
  const embedder = await openEmbedder();
  const embeds: number[] = [];
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    await embedder.embed([`How do I keep question ${i} about dry hopping from turning grassy?`]);
    embeds.push(performance.now() - started);
  }
  await embedder.close();
  report('Embedding a query', 'pnpm bench:semantic-cost', [{ what: 'embedding a query (a title), ms p50 / p99', value: ms(embeds) }]);
}
