import type { QuantizedVector } from '@kn/embedding';
import { mulberry32 } from '@kn/similarity';
import type { Meaning } from '../domain/semantic.ts';

/** Bits of the sketch a nearest-neighbour search scans before it reads the whole vectors. */
const SKETCH_BITS = 256;
/** The sketch's 32-bit words. */
const WORDS = SKETCH_BITS / 32;
/** Rounds of random signs and a Hadamard transform that make the sketch's rotation (three: close to a random one). */
const ROUNDS = 3;
/**
 * Of every vector the sketch ranks, this many times `k` best are compared whole. At 1,000,000
 * clustered vectors (bench:semantic-cost) 50 found 0.994 of the nearest 10 and 100 0.997, at 3.2
 * and 4.2 ms of CPU; the 48-float sketch before needed 200 for 0.964, at 7.6 ms.
 */
const RESCORED = 50;
/** Vectors a chunk of the int8 values holds (1.5 MB at 384 dimensions): the store grows a chunk at a time, never copied. */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
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
 * at 100,000), in chunks of CHUNK vectors rather than an object a question (a store that doubled
 * and copied itself held up to twice its vectors, and left the old copies to the allocator), with a
 * sketch of each: the signs of SKETCH_BITS coordinates of the vector turned by a fixed random
 * rotation (SimHash: 32 bytes). Two sketches differ in a share of their bits that estimates the
 * angle between the vectors, to about ±0.1 of a cosine at 256 bits; a float projection to 48
 * dimensions (192 bytes) kept ±0.14. The rotation is ROUNDS of random signs and a fast Hadamard
 * transform over the vector padded to a power of two: 14,000 additions where a dense random
 * projection to 256 dimensions would take 98,000 multiply-adds a vector. Nearest neighbours scan the
 * sketches, then compare the best few whole.
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
  /** The int8 values, CHUNK vectors a chunk: slot s at chunks[s >> CHUNK_BITS], from (s & (CHUNK − 1)) × dimensions. */
  private readonly chunks: Int8Array[] = [];
  private scales: Float32Array;
  /** The sketches by slot until the partition exists; then each list holds its members' (Partition). */
  private sketches: Int32Array | null;
  /** The sketch of the vector put last. */
  private readonly fresh = new Int32Array(WORDS);
  private readonly rotation: Rotation;
  private readonly slots = new Map<number, number>();
  private ids = new Int32Array(0);
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
    this.scales = new Float32Array(capacity);
    this.sketches = new Int32Array(capacity * WORDS);
    this.ids = new Int32Array(capacity);
    this.rotation = new Rotation(dimensions, 0x6b6e);
  }

  get size() {
    return this.slots.size;
  }

  put(id: number, vector: QuantizedVector) {
    if (vector.values.length !== this.dimensions)
      throw new Error(`a vector of ${vector.values.length} dimensions in an index of ${this.dimensions}`);
    let slot = this.slots.get(id);
    const added = slot === undefined;
    if (slot === undefined) {
      slot = this.slots.size;
      if (slot >= this.ids.length) this.grow();
      if (slot >> CHUNK_BITS === this.chunks.length) this.chunks.push(new Int8Array(CHUNK * this.dimensions));
      this.slots.set(id, slot);
    }
    const chunk = this.chunks[slot >> CHUNK_BITS]!;
    const at = this.offset(slot);
    chunk.set(vector.values, at);
    this.scales[slot] = vector.scale;
    this.ids[slot] = id;
    const sketch = this.rotation.sketch(chunk, at, this.fresh);
    this.sketches?.set(sketch, slot * WORDS);
    this.partition?.place(slot, chunk, at, sketch);
    const { building } = this;
    if (building?.next && slot < building.placed) building.next.place(slot, chunk, at, sketch);
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
      const chunk = this.chunks[slot >> CHUNK_BITS]!;
      const at = this.offset(slot);
      for (let j = 0; j < d; j++) sample[i * d + j] = chunk[at + j]!;
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
    const sketch = this.partition ? this.partition.sketchOf(slot) : this.sketches!.subarray(slot * WORDS, (slot + 1) * WORDS);
    partition.place(slot, this.chunks[slot >> CHUNK_BITS]!, this.offset(slot), sketch);
  }

  /** Where a slot's values start in its chunk. */
  private offset(slot: number): number {
    return (slot & (CHUNK - 1)) * this.dimensions;
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
    const q = this.rotation.sketch(query, 0, new Int32Array(WORDS));
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
  private scanAll(q: Int32Array, n: number): number {
    this.reservePool(n);
    const { poolSlots, poolScores } = this;
    const sketches = this.sketches!;
    for (let slot = 0, o = 0; slot < n; slot++, o += WORDS) {
      poolSlots[slot] = slot;
      poolScores[slot] = agreement(sketches, o, q);
    }
    return n;
  }

  /**
   * Scores the sketches of `lists` into the pool; how many. A list's sketches are one run of
   * memory, read in order: scattered over the array by slot, each cost a cache miss.
   */
  private scanLists(q: Int32Array, partition: Partition, lists: Int32Array): number {
    let pooled = 0;
    for (const list of lists) pooled += partition.counts[list]!;
    this.reservePool(pooled);
    const { poolSlots, poolScores } = this;
    let at = 0;
    for (const list of lists) {
      const members = partition.members[list]!;
      const sketches = partition.sketches[list]!;
      for (let j = 0, o = 0, count = partition.counts[list]!; j < count; j++, o += WORDS, at++) {
        poolSlots[at] = members[j]!;
        poolScores[at] = agreement(sketches, o, q);
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

  /** Room for twice the slots in the arrays by slot (4 bytes a slot each; the values grow by chunks). */
  private grow() {
    const scales = new Float32Array(this.scales.length * 2);
    scales.set(this.scales);
    if (this.sketches) {
      const sketches = new Int32Array(this.sketches.length * 2);
      sketches.set(this.sketches);
      this.sketches = sketches;
    }
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    this.scales = scales;
    this.ids = ids;
  }

  /** The stored vector of a question (unit length within the rounding), or undefined. */
  vectorOf(id: number): Float32Array | undefined {
    const slot = this.slots.get(id);
    if (slot === undefined) return undefined;
    const scale = this.scales[slot]!;
    const start = this.offset(slot);
    return Float32Array.from(this.chunks[slot >> CHUNK_BITS]!.subarray(start, start + this.dimensions), (v) => v * scale);
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
    const { dimensions } = this;
    const values = this.chunks[slot >> CHUNK_BITS]!;
    const start = this.offset(slot);
    let sum = 0;
    for (let i = 0; i < dimensions; i++) sum += values[start + i]! * query[i]!;
    return sum * this.scales[slot]!;
  }
}

/**
 * An inverted file over the whole vectors (the sketches are too rough to cluster by): `fan` coarse
 * centroids, each with up to `fan` fine ones (the lists); a vector belongs to the nearest fine
 * centroid of its nearest coarse one, so that it is placed in 2·fan comparisons. Each list holds
 * its members' slots and, in the same order, their sketches (WORDS words each), so that a query
 * reads each list it probes as one run of memory; 8 bytes a vector for its list and position, and
 * 4 bytes a dimension a centroid.
 */
class Partition {
  readonly lists: number;
  readonly members: Int32Array[];
  readonly sketches: Int32Array[];
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
    this.sketches = Array.from({ length: this.lists }, () => new Int32Array(room * WORDS));
    this.counts = new Int32Array(this.lists);
    this.listOf = new Int32Array(capacity).fill(-1);
    this.positionOf = new Int32Array(capacity);
  }

  /** Puts a slot, with the sketch of its vector, in the list of its vector, out of the one it was in. */
  place(slot: number, values: Int8Array, o: number, sketch: Int32Array) {
    const d = this.dimensions;
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
      this.sketches[list]!.set(sketch, this.positionOf[slot]! * WORDS);
      return;
    }
    if (was >= 0) {
      // An updated vector leaves its list: the list's last member takes its place.
      const at = this.positionOf[slot]!;
      const last = --this.counts[was]!;
      const moved = this.members[was]![last]!;
      this.members[was]![at] = moved;
      this.sketches[was]!.copyWithin(at * WORDS, last * WORDS, (last + 1) * WORDS);
      this.positionOf[moved] = at;
    }
    const count = this.counts[list]!;
    if (count === this.members[list]!.length) this.resize(list, Math.ceil(1.5 * count));
    this.members[list]![count] = slot;
    this.sketches[list]!.set(sketch, count * WORDS);
    this.counts[list] = count + 1;
    this.listOf[slot] = list;
    this.positionOf[slot] = count;
  }

  /** The sketch of a slot's vector (a view into its list). */
  sketchOf(slot: number): Int32Array {
    const o = this.positionOf[slot]! * WORDS;
    return this.sketches[this.listOf[slot]!]!.subarray(o, o + WORDS);
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
    const sketches = new Int32Array(room * WORDS);
    sketches.set(this.sketches[list]!.subarray(0, this.counts[list]! * WORDS));
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

/** The bits two sketches share (the sketch at `o` of `sketches` and `q`): the more, the smaller their vectors' angle. */
function agreement(sketches: Int32Array, o: number, q: Int32Array): number {
  let differ = 0;
  for (let w = 0; w < WORDS; w++) {
    // The bits set in a 32-bit word, by adding neighbouring fields.
    let x = sketches[o + w]! ^ q[w]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    x = (x + (x >>> 4)) & 0x0f0f0f0f;
    differ += Math.imul(x, 0x01010101) >>> 24;
  }
  return SKETCH_BITS - differ;
}

/**
 * A fixed random rotation of vectors padded with zeros to a power of two of at least SKETCH_BITS
 * dimensions, by ROUNDS of random signs then a fast Walsh-Hadamard transform; a sketch is the signs
 * of its first SKETCH_BITS coordinates. The same for a seed, so sketches of the same vector agree.
 */
class Rotation {
  private readonly dimensions: number;
  private readonly length: number;
  private readonly signs: Float32Array;
  private readonly work: Float32Array;

  constructor(dimensions: number, seed: number) {
    this.dimensions = dimensions;
    let length = SKETCH_BITS;
    while (length < dimensions) length *= 2;
    this.length = length;
    const uniform = mulberry32(seed);
    this.signs = Float32Array.from({ length: ROUNDS * length }, () => (uniform() < 0.5 ? -1 : 1));
    this.work = new Float32Array(length);
  }

  /** The sketch of the vector at `o` of `values` (int8 values or a float query: only directions count), in `out`. */
  sketch(values: Int8Array | Float32Array, o: number, out: Int32Array): Int32Array {
    const { work, signs, length } = this;
    for (let i = 0; i < this.dimensions; i++) work[i] = values[o + i]!;
    work.fill(0, this.dimensions);
    for (let round = 0; round < ROUNDS; round++) {
      const s = round * length;
      for (let i = 0; i < length; i++) work[i]! *= signs[s + i]!;
      hadamard(work);
    }
    out.fill(0);
    for (let b = 0; b < SKETCH_BITS; b++) if (work[b]! > 0) out[b >>> 5]! |= 1 << (b & 31);
    return out;
  }
}

/** The Walsh-Hadamard transform of a power-of-two length in place (unnormalized: only signs are read). */
function hadamard(a: Float32Array) {
  for (let h = 1; h < a.length; h *= 2)
    for (let i = 0; i < a.length; i += 2 * h)
      for (let j = i; j < i + h; j++) {
        const x = a[j]!;
        const y = a[j + h]!;
        a[j] = x + y;
        a[j + h] = x - y;
      }
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
