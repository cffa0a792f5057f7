import type { QuantizedVector } from '@kn/embedding';
import type { Meaning } from '../domain/semantic.ts';

/** Dimensions of the sketch a nearest-neighbour search scans before it reads the whole vectors. */
const SKETCH = 48;
/** Of every vector the sketch ranks, this many times `k` best are compared whole. */
const RESCORED = 20;

/**
 * The questions' embeddings in memory, one signed byte a dimension (384 bytes a question: 38 MB
 * at 100,000), in one growing buffer rather than an object a question, with a sketch of each: a
 * random projection to SKETCH dimensions (float32, 192 bytes), which keeps cosines to about
 * ±1/√SKETCH. Nearest neighbours scan the sketches, then compare the best few whole.
 */
export class VectorIndex {
  readonly dimensions: number;
  private values: Int8Array;
  private scales: Float32Array;
  private sketches: Float32Array;
  private readonly projection: Float32Array;
  private readonly slots = new Map<number, number>();
  private ids = new Int32Array(0);
  private readonly hashes: string[] = [];
  private scores = new Float32Array(0);

  constructor(dimensions: number, capacity = 1024) {
    this.dimensions = dimensions;
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
    if (slot === undefined) {
      slot = this.slots.size;
      if ((slot + 1) * this.dimensions > this.values.length) this.grow();
      this.slots.set(id, slot);
    }
    this.values.set(vector.values, slot * this.dimensions);
    this.scales[slot] = vector.scale;
    this.hashes[slot] = sourceHash;
    this.ids[slot] = id;
    this.sketch(slot);
  }

  private sketch(slot: number) {
    const { values, dimensions, projection } = this;
    const start = slot * dimensions;
    const scale = this.scales[slot]!;
    for (let p = 0; p < SKETCH; p++) {
      let sum = 0;
      const row = p * dimensions;
      for (let i = 0; i < dimensions; i++) sum += projection[row + i]! * values[start + i]!;
      this.sketches[slot * SKETCH + p] = sum * scale;
    }
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
   * with their cosine, best first. The sketches choose RESCORED × k candidates; their whole vectors
   * decide.
   */
  nearest(query: Float32Array, k: number, accept: (id: number) => boolean = () => true): Array<{ id: number; score: number }> {
    const n = this.slots.size;
    if (!n || k <= 0) return [];
    const q = this.sketchOf(query);
    const keep = Math.min(n, k * RESCORED);
    if (this.scores.length < n) this.scores = new Float32Array(this.sketches.length / SKETCH);
    const { sketches, scores } = this;
    for (let slot = 0, o = 0; slot < n; slot++, o += SKETCH) {
      let s0 = 0;
      let s1 = 0;
      for (let p = 0; p < SKETCH; p += 2) {
        s0 += sketches[o + p]! * q[p]!;
        s1 += sketches[o + p + 1]! * q[p + 1]!;
      }
      scores[slot] = s0 + s1;
    }
    const floor = kthLargest(scores.slice(0, n), keep);
    const best: Array<{ slot: number }> = [];
    for (let slot = 0; slot < n && best.length < keep * 2; slot++) if (scores[slot]! >= floor) best.push({ slot });
    return best
      .map(({ slot }) => ({ id: this.ids[slot]!, score: this.cosine(this.ids[slot]!, query)! }))
      .filter((r) => accept(r.id))
      .sort((a, b) => b.score - a.score || b.id - a.id)
      .slice(0, k);
  }

  private grow() {
    const values = new Int8Array(this.values.length * 2);
    values.set(this.values);
    const scales = new Float32Array(this.scales.length * 2);
    scales.set(this.scales);
    const sketches = new Float32Array(this.sketches.length * 2);
    sketches.set(this.sketches);
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    this.values = values;
    this.scales = scales;
    this.sketches = sketches;
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
    if (slot === undefined) return undefined;
    const { values, dimensions } = this;
    const start = slot * dimensions;
    let sum = 0;
    for (let i = 0; i < dimensions; i++) sum += values[start + i]! * query[i]!;
    return sum * this.scales[slot]!;
  }
}

/** A rows × columns matrix of independent standard normal numbers, the same for a seed (a random projection). */
function gaussianMatrix(rows: number, columns: number, seed: number): Float32Array {
  let state = seed >>> 0;
  // mulberry32: small, fast, and the same on every machine.
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
  };
  const out = new Float32Array(rows * columns);
  const norm = 1 / Math.sqrt(rows);
  for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()) * norm;
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
