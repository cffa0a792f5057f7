/**
 * Topic vectors (reflective random indexing, Cohen, Schvaneveldt and Widdows 2010), for both
 * engines: two questions about the same thing in other words ("emulator" and "simulator",
 * "realised" and "implemented") are close, which word matching cannot see. Trained on the
 * network's own questions and seeded by the words themselves: every word has a sparse random
 * vector drawn from a hash of its text; a question's first vector is the weighted sum of its words'
 * random vectors; a word's topic vector is the weighted sum of the first vectors of the questions
 * it occurs in (words that occur in like questions end up close); a question's (or a query's)
 * topic vector is the weighted sum of its words' topic vectors. Words are weighted as in the
 * similarity unit (log(1 + tf) · idf, title twice, description, tags, solutions, comments a
 * little), so the same content gives the same vectors whatever order or ids it came with.
 *
 * Vectors are unit length and kept as signed bytes with a scale each (`dimensions` bytes a word and
 * a question). Each engine trains once it has caught up, and again when the number of questions
 * has grown by `retrainGrowth`; questions indexed in between get their vector from the words'
 * vectors as they are. The index is the source of everything here: a restart trains again.
 */
export const topicParameters = {
  dimensions: 128,
  /** Non-zero entries (±1) of a word's random vector. */
  seedLength: 10,
  /** A new training when the indexed questions have grown by this share since the last one. */
  retrainGrowth: 0.25,
  /** No training while more events than this share of the indexed questions wait to be applied. */
  backlogShare: 0.05,
  /** Words whose vectors are summed in one pass of the training (4 bytes a dimension each while summed). */
  wordBlock: 1 << 17,
};

/** FNV-1a of a word: its random vector's seed. */
function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** The positions and signs of a word's sparse random vector (mulberry32 from its hash). */
function randomEntries(word: string, dimensions: number, seedLength: number, out: Int32Array) {
  let state = hash(word);
  for (let k = 0; k < seedLength; k++) {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const position = Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * dimensions);
    out[k] = k % 2 === 0 ? position + 1 : -(position + 1);
  }
}

/** Scales a vector to unit length in place; false when it is zero. */
function normalise(v: Float32Array): boolean {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  if (norm === 0) return false;
  const inverse = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! *= inverse;
  return true;
}

/** Rows of signed bytes with a scale each (0: no vector). */
export class ByteRows {
  bytes: Int8Array;
  scales: Float32Array;
  readonly width: number;

  constructor(width: number, rows: number) {
    this.width = width;
    this.bytes = new Int8Array(width * rows);
    this.scales = new Float32Array(rows);
  }

  get rows() {
    return this.scales.length;
  }

  ensure(rows: number) {
    if (rows <= this.scales.length) return;
    const size = Math.max(rows, Math.ceil(this.scales.length * 1.5), 16);
    const bytes = new Int8Array(this.width * size);
    bytes.set(this.bytes);
    const scales = new Float32Array(size);
    scales.set(this.scales);
    this.bytes = bytes;
    this.scales = scales;
  }

  /** Stores a unit vector (or clears the row for null). */
  set(row: number, v: Float32Array | null) {
    this.ensure(row + 1);
    const at = row * this.width;
    let max = 0;
    if (v) for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
    if (!v || max === 0) {
      this.bytes.fill(0, at, at + this.width);
      this.scales[row] = 0;
      return;
    }
    const factor = 127 / max;
    for (let i = 0; i < v.length; i++) this.bytes[at + i] = Math.round(v[i]! * factor);
    this.scales[row] = max / 127;
  }

  /** Adds weight · row to `into`; false when the row has no vector. */
  addTo(row: number, weight: number, into: Float32Array): boolean {
    const scale = row < this.scales.length ? this.scales[row]! : 0;
    if (scale === 0) return false;
    const w = weight * scale;
    const at = row * this.width;
    for (let i = 0; i < this.width; i++) into[i]! += w * this.bytes[at + i]!;
    return true;
  }

  /**
   * The unit vector of rows summed with weights, `visit` calling `add(row, weight)` for each
   * (`into`: the array to sum in, zeroed), or null when none of them has a vector.
   */
  unitSum(
    visit: (add: (row: number, weight: number) => void) => void,
    into: Float32Array = new Float32Array(this.width),
  ): Float32Array | null {
    let any = false;
    visit((row, weight) => {
      any = this.addTo(row, weight, into) || any;
    });
    return any && normalise(into) ? into : null;
  }

  dot(row: number, v: Float32Array): number {
    const scale = row < this.scales.length ? this.scales[row]! : 0;
    if (scale === 0) return 0;
    const at = row * this.width;
    let dot = 0;
    for (let i = 0; i < this.width; i++) dot += v[i]! * this.bytes[at + i]!;
    return dot * scale;
  }
}

/** What a training reads: questions (by row) with their words (by id) and unit weights. */
export interface TopicCorpus {
  /** Rows of questions: each one at or above is not visited. */
  readonly questions: number;
  /** Ids of words: each one at or above is not visited. */
  readonly words: number;
  word(id: number): string;
  /** Visits every question with its weighted words, a step (a few hundred questions) at a time. */
  eachQuestion(
    visit: (question: number, forEachWord: (visit: (word: number, weight: number) => void) => void) => void,
  ): Generator<void, void>;
}

/** The words' topic vectors from a corpus, a step of eachQuestion at a time (three or more passes). */
export function* trainWordVectors(corpus: TopicCorpus): Generator<void, ByteRows> {
  const { dimensions, seedLength, wordBlock } = topicParameters;
  const entries = new Int32Array(seedLength);
  const v = new Float32Array(dimensions);
  // Each question's first vector, from its words' random vectors.
  const firsts = new ByteRows(dimensions, corpus.questions);
  yield* corpus.eachQuestion((question, forEachWord) => {
    v.fill(0);
    forEachWord((id, w) => {
      randomEntries(corpus.word(id), dimensions, seedLength, entries);
      for (const e of entries) v[Math.abs(e) - 1]! += e > 0 ? w : -w;
    });
    firsts.set(question, normalise(v) ? v : null);
  });
  // Each word's vector: the sum of its questions' first vectors, summed in floats a block of words at a time (bounded memory).
  const words = new ByteRows(dimensions, corpus.words);
  const block = Math.max(1, Math.min(corpus.words, wordBlock));
  const sums = new Float32Array(block * dimensions);
  for (let low = 0; low < corpus.words; low += block) {
    const high = Math.min(corpus.words, low + block);
    sums.fill(0);
    yield* corpus.eachQuestion((question, forEachWord) => {
      const scale = firsts.scales[question]!;
      if (scale === 0) return;
      const at = question * dimensions;
      forEachWord((id, w) => {
        if (id < low || id >= high) return;
        const into = (id - low) * dimensions;
        const f = w * scale;
        for (let i = 0; i < dimensions; i++) sums[into + i]! += f * firsts.bytes[at + i]!;
      });
    });
    for (let id = low; id < high; id++) {
      const sum = sums.subarray((id - low) * dimensions, (id - low + 1) * dimensions);
      if (normalise(sum)) words.set(id, sum);
    }
  }
  return words;
}
