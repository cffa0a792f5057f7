// What meaning adds to a search request (issue 49), at QUESTIONS vectors (100,000 by default;
// QUESTIONS=1000000 for a million): the vectors' memory and load rate in the search process's
// VectorIndex, the cosine of question search's 50 best with the query, the nearest-neighbour search
// (similar questions; question search with fewer than 10 text matches) with its recall@10 against an
// exact scan, and embedding a query with the set-up's model (infra/ensure-model.sh). The vectors are
// synthetic (1,000 topics and noise, unit length): what is timed does not depend on their values.
// Run: pnpm bench:semantic-cost
import { openEmbedder, quantize } from '@kn/embedding';
import { VectorIndex } from '../services/search/src/semantic/vectors.ts';
import { report } from './lib.ts';

const QUESTIONS = Number(process.env.QUESTIONS ?? 100_000);
const DIMENSIONS = 384;
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31 - 0.5;
};
const unit = (v: Float32Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
};
const topics = Array.from({ length: 1000 }, () => unit(Float32Array.from({ length: DIMENSIONS }, random)));
const vectorOf = (i: number) => unit(Float32Array.from(topics[i % 1000]!, (x) => x + 0.8 * random()));

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const rss = () => process.memoryUsage().rss / 2 ** 20;

const before = rss();
const index = new VectorIndex(DIMENSIONS);
const queries: Float32Array[] = [];
let started = performance.now();
for (let i = 0; i < QUESTIONS; i++) {
  const v = vectorOf(i);
  if (i % Math.floor(QUESTIONS / 50) === 7) queries.push(v);
  index.put(i, quantize(v), 'hash');
}
const loadSeconds = (performance.now() - started) / 1000;
const memory = rss() - before;

const cosines: number[] = [];
const nearest: number[] = [];
let found = 0;
for (const q of queries) {
  started = performance.now();
  for (let k = 0; k < 50; k++) index.cosine((k * 7919) % QUESTIONS, q);
  cosines.push(performance.now() - started);
  started = performance.now();
  const got = new Set(index.nearest(q, 10).map((n) => n.id));
  nearest.push(performance.now() - started);
  const exact: Array<{ id: number; s: number }> = [];
  for (let id = 0; id < QUESTIONS; id++) exact.push({ id, s: index.cosine(id, q)! });
  exact.sort((a, b) => b.s - a.s);
  found += exact.slice(0, 10).filter((e) => got.has(e.id)).length;
}

const embedder = await openEmbedder();
const embeds: number[] = [];
for (let i = 0; i < 40; i++) {
  started = performance.now();
  await embedder.embed([`How do I keep question ${i} about dry hopping from turning grassy?`]);
  embeds.push(performance.now() - started);
}
await embedder.close();

const ms = (xs: number[]) => `${percentile(xs, 0.5).toFixed(2)} / ${percentile(xs, 0.99).toFixed(2)}`;
report(
  `Meaning in a search request at ${QUESTIONS} questions (${queries.length} queries)`,
  `QUESTIONS=${QUESTIONS} pnpm bench:semantic-cost`,
  [
    { what: 'vectors in memory (MiB, RSS growth)', value: memory.toFixed(0) },
    { what: 'vectors loaded a second', value: Math.round(QUESTIONS / loadSeconds) },
    { what: 'cosine of 50 best text matches, ms p50 / p99', value: ms(cosines) },
    { what: 'nearest 10 by meaning, ms p50 / p99', value: ms(nearest) },
    { what: 'nearest 10: recall@10 against an exact scan', value: (found / (10 * queries.length)).toFixed(3) },
    { what: 'embedding a query (a title), ms p50 / p99', value: ms(embeds) },
  ],
);
