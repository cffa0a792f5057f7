import { quantize } from '@kn/embedding';
import { VectorIndex } from '../services/search/src/semantic/vectors.ts';

// Unit tests of the in-memory nearest-neighbour search (no system started). The vectors are
// clustered as questions are (20 topics), so that the partition has something to find.
const DIMENSIONS = 64;

function generator(seed: number) {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
  };
  const direction = () =>
    unit(Float32Array.from({ length: DIMENSIONS }, () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())));
  const topics = Array.from({ length: 20 }, direction);
  return (topic: number) => {
    const noise = direction();
    return unit(noise.map((x, d) => 0.7 * x + topics[topic % topics.length]![d]!));
  };
}

function unit(v: Float32Array) {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** The k nearest by the stored vectors' cosine, compared one by one. */
function exact(index: VectorIndex, ids: Iterable<number>, query: Float32Array, k: number) {
  return [...ids]
    .map((id) => ({ id, score: index.cosine(id, query)! }))
    .sort((a, b) => b.score - a.score || b.id - a.id)
    .slice(0, k);
}

function filled(count: number, exactBelow: number) {
  const vectorOf = generator(7);
  const index = new VectorIndex(DIMENSIONS, { exactBelow });
  for (let id = 0; id < count; id++) index.put(id, quantize(vectorOf(id)));
  return { index, vectorOf };
}

test('below the partition, nearest is the exact order', () => {
  const { index, vectorOf } = filled(150, 1000);
  for (let i = 0; i < 5; i++) {
    const query = vectorOf(i);
    expect(index.nearest(query, 10).map((n) => n.id)).toEqual(
      exact(
        index,
        Array.from({ length: 150 }, (_, id) => id),
        query,
        10,
      ).map((n) => n.id),
    );
  }
  expect(index.partitionLists).toBe(0);
});

test('vectors in later chunks of the store are kept and found as the first ones are', () => {
  // The values grow 4,096 vectors at a time (semantic/vectors.ts CHUNK): the slots on both sides of a chunk's edge.
  const vectorOf = generator(11);
  const index = new VectorIndex(DIMENSIONS, { exactBelow: 100_000 });
  const vectors = Array.from({ length: 9000 }, (_, id) => vectorOf(id));
  for (const [id, vector] of vectors.entries()) index.put(id, quantize(vector));
  for (const id of [0, 4095, 4096, 8191, 8192, 8999]) {
    const stored = index.vectorOf(id)!;
    expect(stored.reduce((sum, x, d) => sum + x * vectors[id]![d]!, 0)).toBeCloseTo(1, 2);
    expect(index.nearest(vectors[id]!, 1)[0]!.id).toBe(id);
  }
});

test('with the partition in use, vectors put and changed after it was built are found', () => {
  const { index, vectorOf } = filled(3000, 1000);
  index.buildPartition();
  expect(index.partitionLists).toBeGreaterThan(10);
  const added = vectorOf(3);
  index.put(9000, quantize(added));
  expect(index.nearest(added, 1)[0]).toEqual({ id: 9000, score: expect.closeTo(1, 2) });
  // Question 5 now says what topic 11 says: found by its new vector, no longer by its old one.
  const before = index.vectorOf(5)!;
  const after = vectorOf(11);
  index.put(5, quantize(after));
  expect(index.nearest(after, 1)[0]!.id).toBe(5);
  expect(index.nearest(before, 10).map((n) => n.id)).not.toContain(5);
  expect(index.size).toBe(3001);
});

test('accept: k results when enough are accepted, however few', () => {
  const { index, vectorOf } = filled(3000, 1000);
  index.buildPartition();
  const query = vectorOf(4);
  const some = (id: number) => id % 7 === 0;
  const found = index.nearest(query, 10, some);
  expect(found).toHaveLength(10);
  expect(found.every((n) => some(n.id))).toBe(true);
  // A dozen accepted, most of them far away: every list is looked at, and the order is exact.
  const dozen = new Set(Array.from({ length: 12 }, (_, i) => i * 251));
  expect(index.nearest(query, 10, (id) => dozen.has(id))).toEqual(exact(index, dozen, query, 10));
});

test('the partition is built in the background, and vectors put meanwhile are found', async () => {
  const { index, vectorOf } = filled(1500, 1000);
  expect(index.partitionLists).toBe(0);
  const late: Array<{ id: number; vector: Float32Array }> = [];
  for (let round = 0; index.partitionLists === 0; round++) {
    if (round > 2000) throw new Error('the partition was never built');
    const vector = vectorOf(round);
    index.put(10_000 + round, quantize(vector));
    late.push({ id: 10_000 + round, vector });
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  for (const { id, vector } of late) expect(index.nearest(vector, 1)[0]!.id).toBe(id);
});

test.each([
  ['the first partition', 0],
  ['a partition trained again', 1],
])('%s: a vector put between any two steps of its build is found', (_, rebuilds) => {
  const { index, vectorOf } = filled(1000, 1000);
  if (rebuilds) {
    index.buildPartition();
    for (let id = 1000; id < 2000; id++) index.put(id, quantize(vectorOf(id)));
  }
  const lists = index.partitionLists;
  const late: Array<{ id: number; vector: Float32Array }> = [];
  // The put that filled the index started the build: one step of it at a time, a vector put after each.
  for (let round = 0; index.partitionLists === lists; round++) {
    if (round > 20_000) throw new Error('the partition was never built');
    const vector = vectorOf(round);
    index.put(10_000 + round, quantize(vector));
    late.push({ id: 10_000 + round, vector });
    index.buildPartition(0);
  }
  for (const { id, vector } of late) expect(index.nearest(vector, 1)[0]!.id).toBe(id);
});

test('the partition trained again as the index grows keeps every vector findable', () => {
  const { index, vectorOf } = filled(600, 500);
  index.buildPartition();
  const first = index.partitionLists;
  // Twice as many vectors: the next partition places the first ones with the sketches its lists hold.
  for (let id = 600; id < 1300; id++) index.put(id, quantize(vectorOf(id)));
  index.buildPartition();
  expect(index.partitionLists).not.toBe(first);
  for (let id = 0; id < 1300; id += 37) expect(index.nearest(index.vectorOf(id)!, 1)[0]!.id).toBe(id);
});

test('lists hold about as many vectors where questions are dense as where they are sparse', () => {
  // Topics of very different sizes, as a network's are: topic t holds about 1/(t + 1) of the questions.
  const vectorOf = generator(11);
  const index = new VectorIndex(DIMENSIONS, { exactBelow: 1000 });
  let id = 0;
  for (let t = 0; t < 20; t++) for (let i = 0; i < Math.round(2000 / (t + 1)); i++) index.put(id++, quantize(vectorOf(t)));
  index.buildPartition();
  const sizes = [...index.listSizes()].sort((a, b) => a - b);
  const median = sizes[sizes.length >> 1]!;
  // One list a coarse centroid's share of `fan` made the densest topic's lists about 8× the median.
  expect(sizes.at(-1)!).toBeLessThanOrEqual(3 * median);
  // Found as well as before: the nearest of a vector put is itself.
  for (let q = 0; q < id; q += 997) expect(index.nearest(index.vectorOf(q)!, 1)[0]!.id).toBe(q);
});
