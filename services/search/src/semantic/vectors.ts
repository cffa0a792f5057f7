import type { QuantizedVector } from '@kn/embedding';
import { mulberry32 } from '@kn/similarity';
import type { Meaning } from '../domain/semantic.ts';

/** Dimensions of the sketch a nearest-neighbour search scans before it reads the whole vectors. */
const SKETCH = 48;
/**
 * Of every vector the sketch ranks, this many times `k` best are compared whole. The sketch's error
 * limits recall, not the lists probed: at 1,000,000 clustered vectors 50 found 0.89 of the nearest
 * 10, 100 0.95, 200 0.98 (64 probes instead of 32 found fewer with 50: more to confuse the sketch).
 * Comparing 2,000 int8 vectors is 768,000 multiply-adds, half of scanning the 32,000 sketches of 32 lists.
 */
const RESCORED = 200;
/** Below this many vectors every sketch is scanned: a partition would save less than it costs. */
const EXACT_BELOW = 50_000;
/** The partition is trained again once the index has grown this many times since it was trained. */
const REGROWTH = 2;
/** A query scans the nearest lists until they hold this many average lists' vectors (more while too few are accepted). */
const PROBES = 32;
/** Sampled vectors a list that k-means trains on. */
const SAMPLE_PER_LIST = 16;
const ITERATIONS = 5;
/** A k-means cluster holds at most this many times the average of its training sample (kmeans). */
const BALANCE = 1.5;
/** A background build of the partition works for this long between two turns of the event loop. */
const SLICE_MS = 5;

/**
 * The questions' embeddings in memory, one signed byte a dimension (384 bytes a question: 38 MB
 * at 100,000), in one growing buffer rather than an object a question, with a sketch of each: a
 * random projection to SKETCH dimensions (float32, 192 bytes), which keeps cosines to about
 * ±1/√SKETCH. Nearest neighbours scan the sketches, then compare the best few whole.
 *
 * From EXACT_BELOW vectors on, the vectors are partitioned into about √n lists (an inverted file:
 * two-level k-means with clusters of bounded size, so that a vector finds its list in about 2·n^¼
 * comparisons rather than √n), and a query scans the sketches of the lists whose centroids are
 * nearest it until they hold PROBES average lists' worth: about 32·√n rather than n, whatever the
 * sizes of the lists near it. The partition is built in the background, SLICE_MS at a time, and again once the index
 * has grown REGROWTH times; until then vectors put join their nearest list at once. Once it is
 * built, each list holds its members' sketches in list order (a probe reads sequential memory, not
 * one cache miss a member) and the array of sketches by slot is let go, so they are kept once.
 */
export class VectorIndex {
  readonly dimensions: number;
  private values: Int8Array;
  private scales: Float32Array;
  /** The sketches by slot until the partition exists; then each list holds its members' (Partition). */
  private sketches: Float32Array | null;
  /** The sketch of the vector put last. */
  private readonly fresh = new Float32Array(SKETCH);
  private readonly projection: Float32Array;
  private readonly slots = new Map<number, number>();
  private ids = new Int32Array(0);
  private readonly hashes: string[] = [];
  private readonly exactBelow: number;
  private partition: Partition | null = null;
  /** The partition being built: vectors put below `placed` are placed in it at once, the others when the build reaches them. */
  private building: { steps: Generator<void, Partition>; next: Partition | null; placed: number } | null = null;
  private poolSlots = new Int32Array(0);
  private poolScores = new Float32Array(0);

  constructor(dimensions: number, options: { capacity?: number; exactBelow?: number } = {}) {
    const capacity = options.capacity ?? 1024;
    this.dimensions = dimensions;
    this.exactBelow = options.exactBelow ?? EXACT_BELOW;
    this.values = new Int8Array(capacity * dimensions);
    this.scales = new Float32Array(capacity);
    this.sketches = new Float32Array(capacity * SKETCH);
    this.ids = new Int32Array(capacity);
    this.projection = gaussianMatrix(SKETCH, dimensions, 0x6b6e);
  }

  get size() {
    return this.slots.size;
  }

  /** The hash of the text a question's vector was made from, if it has one. */
  sourceOf(id: number): string | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.hashes[slot];
  }

  put(id: number, vector: QuantizedVector, sourceHash: string) {
    if (vector.values.length !== this.dimensions)
      throw new Error(`a vector of ${vector.values.length} dimensions in an index of ${this.dimensions}`);
    let slot = this.slots.get(id);
    const added = slot === undefined;
    if (slot === undefined) {
      slot = this.slots.size;
      if ((slot + 1) * this.dimensions > this.values.length) this.grow();
      this.slots.set(id, slot);
    }
    this.values.set(vector.values, slot * this.dimensions);
    this.scales[slot] = vector.scale;
    this.hashes[slot] = sourceHash;
    this.ids[slot] = id;
    const sketch = this.sketch(slot);
    this.sketches?.set(sketch, slot * SKETCH);
    this.partition?.place(slot, this.values, sketch);
    const { building } = this;
    if (building?.next && slot < building.placed) building.next.place(slot, this.values, sketch);
    if (added && !building && this.partitionDue()) {
      this.building = { steps: this.build(), next: null, placed: 0 };
      this.scheduleBuild();
    }
  }

  /** The lists of the partition queries scan; 0 while every sketch is. */
  get partitionLists(): number {
    return this.partition?.lists ?? 0;
  }

  /** How many vectors each list of the partition holds (empty while every sketch is scanned): its balance. */
  listSizes(): Int32Array {
    return this.partition ? this.partition.counts.slice() : new Int32Array(0);
  }

  /**
   * Builds the partition now, or works on the build under way: at least one step, then until `ms`
   * have passed (benchmarks, tests; the index builds it by itself in slices).
   */
  buildPartition(ms = Number.POSITIVE_INFINITY) {
    this.building ??= { steps: this.build(), next: null, placed: 0 };
    this.work(ms);
  }

  private partitionDue() {
    const n = this.slots.size;
    return n >= this.exactBelow && (!this.partition || n >= REGROWTH * this.partition.trainedAt);
  }

  private scheduleBuild() {
    setTimeout(() => this.work(SLICE_MS), 0).unref();
  }

  private work(ms: number) {
    const { building } = this;
    if (!building) return;
    const until = performance.now() + ms;
    do {
      const step = building.steps.next();
      if (step.done) {
        this.partition = step.value;
        // From now on the lists hold the sketches: the array by slot would be a second copy.
        this.sketches = null;
        this.building = null;
        if (this.partitionDue()) {
          this.building = { steps: this.build(), next: null, placed: 0 };
          this.scheduleBuild();
        }
        return;
      }
    } while (performance.now() < until);
    this.scheduleBuild();
  }

  /** Trains the partition on a sample of the vectors, then places every vector; yields every 64 vectors (a millisecond or two). */
  private *build(): Generator<void, Partition> {
    const n = this.slots.size;
    const fan = Math.ceil(Math.sqrt(Math.sqrt(n)));
    const random = mulberry32(0x1f);
    const sampled = Math.min(n, SAMPLE_PER_LIST * fan * fan);
    const d = this.dimensions;
    const sample = new Float32Array(sampled * d);
    for (let i = 0; i < sampled; i++) {
      const slot = Math.floor(random() * n);
      for (let j = 0; j < d; j++) sample[i * d + j] = this.values[slot * d + j]!;
    }
    const coarse = yield* kmeans(sample, d, fan);
    const groups: number[][] = Array.from({ length: fan }, () => []);
    for (let i = 0; i < sampled; i++) {
      groups[nearestCentroid(coarse, 0, fan, sample, i * d, d)]!.push(i);
      if (i % 64 === 63) yield;
    }
    const fine: Float32Array[] = [];
    for (const [c, group] of groups.entries()) {
      const points = new Float32Array(group.length * d);
      for (const [j, i] of group.entries()) points.set(sample.subarray(i * d, (i + 1) * d), j * d);
      // Lists in proportion to the coarse centroid's share of the sample, so that lists hold about
      // as many vectors everywhere: `fan` each made a dense region's lists several times the
      // median (8× at a million clustered vectors), and a query near one scanned that many more.
      const lists = Math.min(group.length, Math.max(1, Math.round((fan * fan * group.length) / sampled)));
      // A coarse centroid that drew no sample keeps itself as its one list.
      fine.push(group.length ? yield* kmeans(points, d, lists) : coarse.slice(c * d, (c + 1) * d));
    }
    const partition = new Partition(d, coarse, fine, n, this.ids.length);
    const building = this.building!;
    building.next = partition;
    // The vectors put while this runs count too: those below `placed` are placed by put. A
    // vector's sketch is in the array by slot before the first partition, in the old partition's lists after.
    while (building.placed < this.slots.size) {
      this.placeNext(building, partition);
      if (building.placed % 64 === 0) yield;
    }
    for (let list = 0; list < partition.lists; list++) {
      partition.trim(list);
      if (list % 16 === 15) yield;
    }
    // The trims yield too: a vector put meanwhile is at `placed` or above, which put leaves to the build.
    while (building.placed < this.slots.size) this.placeNext(building, partition);
    return partition;
  }

  private placeNext(building: { placed: number }, partition: Partition) {
    const slot = building.placed++;
    const sketch = this.partition ? this.partition.sketchOf(slot) : this.sketches!.subarray(slot * SKETCH, (slot + 1) * SKETCH);
    partition.place(slot, this.values, sketch);
  }

  /** The sketch of the vector at a slot, in `fresh`. */
  private sketch(slot: number): Float32Array {
    const { values, dimensions, projection, fresh } = this;
    const start = slot * dimensions;
    const scale = this.scales[slot]!;
    for (let p = 0; p < SKETCH; p++) {
      let sum = 0;
      const row = p * dimensions;
      for (let i = 0; i < dimensions; i++) sum += projection[row + i]! * values[start + i]!;
      fresh[p] = sum * scale;
    }
    return fresh;
  }

  private sketchOf(query: Float32Array): Float32Array {
    const out = new Float32Array(SKETCH);
    for (let p = 0; p < SKETCH; p++) {
      let sum = 0;
      const row = p * this.dimensions;
      for (let i = 0; i < this.dimensions; i++) sum += this.projection[row + i]! * query[i]!;
      out[p] = sum;
    }
    return out;
  }

  /**
   * The `k` questions whose vectors are nearest a unit query vector (of those `accept` lets in),
   * with their cosine, best first. The sketches of every vector, or of the partition's nearest
   * lists, choose RESCORED × k accepted candidates; their whole vectors decide. Lists are scanned
   * twice as many at a time until that many are accepted.
   */
  nearest(query: Float32Array, k: number, accept: (id: number) => boolean = () => true): Array<{ id: number; score: number }> {
    const n = this.slots.size;
    if (!n || k <= 0) return [];
    const q = this.sketchOf(query);
    const wanted = k * RESCORED;
    const { partition } = this;
    const closeness = partition?.closeness(query);
    for (let probes = PROBES; ; probes *= 2) {
      // A budget of vectors rather than a number of lists: the nearest lists, nearest first, until
      // they hold as many as `probes` lists of average size; a query near large lists scans fewer of them.
      const pooled = partition
        ? this.scanLists(
            q,
            partition,
            partition.nearestLists(closeness!, Math.min(partition.lists, 4 * probes), (probes * n) / partition.lists),
          )
        : this.scanAll(q, n);
      const found = this.rescore(query, pooled, wanted, accept);
      if (found.length >= wanted || !partition || probes >= partition.lists)
        return found.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, k);
    }
  }

  /** Scores every sketch into the pool; how many. */
  private scanAll(q: Float32Array, n: number): number {
    this.reservePool(n);
    const { poolSlots, poolScores } = this;
    const sketches = this.sketches!;
    for (let slot = 0, o = 0; slot < n; slot++, o += SKETCH) {
      poolSlots[slot] = slot;
      poolScores[slot] = dotSketch(sketches, o, q, 0);
    }
    return n;
  }

  /**
   * Scores the sketches of `lists` into the pool; how many. A list's sketches are one run of
   * memory, read in order: scattered over the array by slot, each cost a cache miss.
   */
  private scanLists(q: Float32Array, partition: Partition, lists: Int32Array): number {
    let pooled = 0;
    for (const list of lists) pooled += partition.counts[list]!;
    this.reservePool(pooled);
    const { poolSlots, poolScores } = this;
    let at = 0;
    for (const list of lists) {
      const members = partition.members[list]!;
      const sketches = partition.sketches[list]!;
      for (let j = 0, o = 0, count = partition.counts[list]!; j < count; j++, o += SKETCH, at++) {
        poolSlots[at] = members[j]!;
        poolScores[at] = dotSketch(sketches, o, q, 0);
      }
    }
    return pooled;
  }

  private reservePool(count: number) {
    if (this.poolSlots.length >= count) return;
    this.poolSlots = new Int32Array(count);
    this.poolScores = new Float32Array(count);
  }

  /**
   * The pool's `wanted` best by their sketch that `accept` lets in, with their whole cosine: the
   * best `wanted` are asked first, then twice as many while too few were accepted.
   */
  private rescore(query: Float32Array, pooled: number, wanted: number, accept: (id: number) => boolean) {
    const { poolSlots, poolScores, ids } = this;
    const found: Array<{ id: number; score: number }> = [];
    let above = Number.POSITIVE_INFINITY;
    for (let taken = Math.min(pooled, wanted); found.length < wanted; taken = Math.min(pooled, taken * 2)) {
      const floor = taken < pooled ? kthLargest(poolScores.slice(0, pooled), taken) : Number.NEGATIVE_INFINITY;
      for (let i = 0; i < pooled; i++) {
        const score = poolScores[i]!;
        if (score < floor || score >= above) continue;
        const slot = poolSlots[i]!;
        if (accept(ids[slot]!)) found.push({ id: ids[slot]!, score: this.cosineAt(slot, query) });
      }
      if (taken >= pooled) break;
      above = floor;
    }
    return found;
  }

  private grow() {
    const values = new Int8Array(this.values.length * 2);
    values.set(this.values);
    const scales = new Float32Array(this.scales.length * 2);
    scales.set(this.scales);
    if (this.sketches) {
      const sketches = new Float32Array(this.sketches.length * 2);
      sketches.set(this.sketches);
      this.sketches = sketches;
    }
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    this.values = values;
    this.scales = scales;
    this.ids = ids;
  }

  /** The stored vector of a question (unit length within the rounding), or undefined. */
  vectorOf(id: number): Float32Array | undefined {
    const slot = this.slots.get(id);
    if (slot === undefined) return undefined;
    const scale = this.scales[slot]!;
    const start = slot * this.dimensions;
    return Float32Array.from(this.values.subarray(start, start + this.dimensions), (v) => v * scale);
  }

  /** A query vector's meaning as ranking reads it (domain/semantic.ts). */
  meaning(query: Float32Array): Meaning {
    return { cosine: (id) => this.cosine(id, query), nearest: (k, accept) => this.nearest(query, k, accept) };
  }

  /** The cosine of a unit query vector with a question's, or undefined when it has none yet. */
  cosine(id: number, query: Float32Array): number | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.cosineAt(slot, query);
  }

  private cosineAt(slot: number, query: Float32Array): number {
    const { values, dimensions } = this;
    const start = slot * dimensions;
    let sum = 0;
    for (let i = 0; i < dimensions; i++) sum += values[start + i]! * query[i]!;
    return sum * this.scales[slot]!;
  }
}

/**
 * An inverted file over the whole vectors (the sketches are too rough to cluster by): `fan` coarse
 * centroids, each with up to `fan` fine ones (the lists); a vector belongs to the nearest fine
 * centroid of its nearest coarse one, so that it is placed in 2·fan comparisons. Each list holds
 * its members' slots and, in the same order, their sketches (SKETCH floats each), so that a query
 * reads each list it probes as one run of memory; 8 bytes a vector for its list and position, and
 * 4 bytes a dimension a centroid.
 */
class Partition {
  readonly lists: number;
  readonly members: Int32Array[];
  readonly sketches: Float32Array[];
  readonly counts: Int32Array;
  /** The index's size when the partition was trained. */
  readonly trainedAt: number;
  private readonly dimensions: number;
  private readonly coarse: Float32Array;
  private readonly centroids: Float32Array;
  /** The lists of coarse centroid c are firstList[c] … firstList[c + 1] − 1. */
  private readonly firstList: Int32Array;
  private listOf: Int32Array;
  private positionOf: Int32Array;

  constructor(dimensions: number, coarse: Float32Array, fine: Float32Array[], trainedAt: number, capacity: number) {
    this.dimensions = dimensions;
    this.coarse = coarse;
    this.trainedAt = trainedAt;
    this.firstList = new Int32Array(fine.length + 1);
    for (const [c, centroids] of fine.entries()) this.firstList[c + 1] = this.firstList[c]! + centroids.length / dimensions;
    this.lists = this.firstList[fine.length]!;
    this.centroids = new Float32Array(this.lists * dimensions);
    for (const [c, centroids] of fine.entries()) this.centroids.set(centroids, this.firstList[c]! * dimensions);
    const room = 16 + Math.ceil(trainedAt / this.lists);
    this.members = Array.from({ length: this.lists }, () => new Int32Array(room));
    this.sketches = Array.from({ length: this.lists }, () => new Float32Array(room * SKETCH));
    this.counts = new Int32Array(this.lists);
    this.listOf = new Int32Array(capacity).fill(-1);
    this.positionOf = new Int32Array(capacity);
  }

  /** Puts a slot, with the sketch of its vector, in the list of its vector, out of the one it was in. */
  place(slot: number, values: Int8Array, sketch: Float32Array) {
    const d = this.dimensions;
    const o = slot * d;
    const c = nearestCentroid(this.coarse, 0, this.coarse.length / d, values, o, d);
    const list = nearestCentroid(this.centroids, this.firstList[c]!, this.firstList[c + 1]!, values, o, d);
    if (slot >= this.listOf.length) {
      const length = Math.max(2 * this.listOf.length, slot + 1);
      const listOf = new Int32Array(length).fill(-1);
      listOf.set(this.listOf);
      this.listOf = listOf;
      const positionOf = new Int32Array(length);
      positionOf.set(this.positionOf);
      this.positionOf = positionOf;
    }
    const was = this.listOf[slot]!;
    if (was === list) {
      this.sketches[list]!.set(sketch, this.positionOf[slot]! * SKETCH);
      return;
    }
    if (was >= 0) {
      // An updated vector leaves its list: the list's last member takes its place.
      const at = this.positionOf[slot]!;
      const last = --this.counts[was]!;
      const moved = this.members[was]![last]!;
      this.members[was]![at] = moved;
      this.sketches[was]!.copyWithin(at * SKETCH, last * SKETCH, (last + 1) * SKETCH);
      this.positionOf[moved] = at;
    }
    const count = this.counts[list]!;
    if (count === this.members[list]!.length) this.resize(list, Math.ceil(1.5 * count));
    this.members[list]![count] = slot;
    this.sketches[list]!.set(sketch, count * SKETCH);
    this.counts[list] = count + 1;
    this.listOf[slot] = list;
    this.positionOf[slot] = count;
  }

  /** The sketch of a slot's vector (a view into its list). */
  sketchOf(slot: number): Float32Array {
    const o = this.positionOf[slot]! * SKETCH;
    return this.sketches[this.listOf[slot]!]!.subarray(o, o + SKETCH);
  }

  /** Leaves a list room for an eighth more than it holds (the build's lists grow by half as they fill). */
  trim(list: number) {
    const room = 16 + Math.ceil(1.125 * this.counts[list]!);
    if (room < this.members[list]!.length) this.resize(list, room);
  }

  private resize(list: number, room: number) {
    const members = new Int32Array(room);
    members.set(this.members[list]!.subarray(0, this.counts[list]!));
    this.members[list] = members;
    const sketches = new Float32Array(room * SKETCH);
    sketches.set(this.sketches[list]!.subarray(0, this.counts[list]! * SKETCH));
    this.sketches[list] = sketches;
  }

  /** The dot product of each list's centroid with a query vector. */
  closeness(query: Float32Array): Float32Array {
    const scores = new Float32Array(this.lists);
    for (let list = 0; list < this.lists; list++) scores[list] = dot(this.centroids, list * this.dimensions, query, 0, this.dimensions);
    return scores;
  }

  /**
   * Of the `candidates` lists of greatest closeness (a selection, then only those sorted), the
   * nearest first until they hold `budget` vectors; at least one.
   */
  nearestLists(closeness: Float32Array, candidates: number, budget: number): Int32Array {
    let chosen: Int32Array;
    if (candidates >= this.lists) chosen = Int32Array.from({ length: this.lists }, (_, i) => i);
    else {
      const floor = kthLargest(closeness.slice(), candidates);
      chosen = new Int32Array(candidates);
      let at = 0;
      for (let list = 0; list < this.lists && at < candidates; list++) if (closeness[list]! > floor) chosen[at++] = list;
      for (let list = 0; list < this.lists && at < candidates; list++) if (closeness[list] === floor) chosen[at++] = list;
    }
    chosen.sort((a, b) => closeness[b]! - closeness[a]!);
    let taken = 0;
    for (let held = 0; taken < chosen.length && (taken === 0 || held < budget); taken++) held += this.counts[chosen[taken]!]!;
    return chosen.subarray(0, taken);
  }
}

/**
 * `dot` over one sketch, kept apart for the scans' hottest loop: a fixed length and Float32Array
 * arguments only (dot also takes int8 vectors) measured 11–13 against 14–17 ms per 100,000 sketches.
 */
function dotSketch(a: Float32Array, ao: number, b: Float32Array, bo: number): number {
  let s0 = 0;
  let s1 = 0;
  for (let p = 0; p < SKETCH; p += 2) {
    s0 += a[ao + p]! * b[bo + p]!;
    s1 += a[ao + p + 1]! * b[bo + p + 1]!;
  }
  return s0 + s1;
}

function dot(a: Float32Array, ao: number, b: Float32Array | Int8Array, bo: number, length: number): number {
  let s0 = 0;
  let s1 = 0;
  for (let i = 0; i < length; i += 2) {
    s0 += a[ao + i]! * b[bo + i]!;
    s1 += a[ao + i + 1]! * b[bo + i + 1]!;
  }
  return s0 + s1;
}

/** The centroid from … to − 1 of `centroids` (of those `open` lets in) nearest (greatest dot product) the vector at `o` of `vectors`. */
function nearestCentroid(
  centroids: Float32Array,
  from: number,
  to: number,
  vectors: Float32Array | Int8Array,
  o: number,
  d: number,
  open?: (c: number) => boolean,
): number {
  let best = from;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let c = from; c < to; c++) {
    if (open && !open(c)) continue;
    const score = dot(centroids, c * d, vectors, o, d);
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

/**
 * Spherical k-means (unit centroids, nearest by dot product) of vectors of `d` dimensions in random
 * order, started from the first `clusters` of them, with clusters of at most BALANCE times the
 * average: a point goes to the nearest centroid with room. Left free, a centroid that drew a point
 * of a dense region early becomes its mean and takes the whole region (a seed's own noise along the
 * region's direction decides which, not the points' places), so that a few lists held most vectors
 * and a query near them scanned many times the average. A centroid left without points stays where it was.
 */
function* kmeans(points: Float32Array, d: number, clusters: number): Generator<void, Float32Array> {
  const count = points.length / d;
  const centroids = points.slice(0, clusters * d);
  const sums = new Float64Array(clusters * d);
  const sizes = new Int32Array(clusters);
  const room = Math.ceil((BALANCE * count) / clusters);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    sums.fill(0);
    sizes.fill(0);
    for (let i = 0; i < count; i++) {
      const c = nearestCentroid(centroids, 0, clusters, points, i * d, d, (c) => sizes[c]! < room);
      sizes[c]!++;
      for (let j = 0; j < d; j++) sums[c * d + j] = sums[c * d + j]! + points[i * d + j]!;
      if (i % 64 === 63) yield;
    }
    for (let c = 0; c < clusters; c++) {
      let norm = 0;
      for (let j = 0; j < d; j++) norm += sums[c * d + j]! ** 2;
      if (norm > 0) for (let j = 0; j < d; j++) centroids[c * d + j] = sums[c * d + j]! / Math.sqrt(norm);
    }
  }
  return centroids;
}

/** A rows × columns matrix of independent standard normal numbers, the same for a seed (a random projection). */
function gaussianMatrix(rows: number, columns: number, seed: number): Float32Array {
  const uniform = mulberry32(seed);
  const out = new Float32Array(rows * columns);
  const norm = 1 / Math.sqrt(rows);
  for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()) * norm;
  return out;
}

/** The k-th largest value (k ≥ 1) of an array it reorders (quickselect). */
function kthLargest(values: Float32Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target]!;
}
