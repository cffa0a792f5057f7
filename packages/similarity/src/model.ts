import { type Language, type TokenizeOptions, tokenize } from './text.ts';

/** One unit of the corpus: a question with its tags, solutions (and comments) as one text. */
export interface SimilarityDocument {
  text: string | readonly WeightedText[];
  language?: Language;
}

export type SimilarityMethod = 'tfidf' | 'rri' | 'blend';

export interface ModelOptions {
  /** tfidf: sparse term weights; rri: reflective random indexing; blend: a weighted mean of both. Default blend. */
  method?: SimilarityMethod;
  /** Language of texts that do not name one. Default en. */
  language?: Language;
  /** Light stemming. Default false: it did not raise MAP on SemEval-2016 (bench/semeval.ts). */
  stem?: boolean;
  /** RRI vector length. Default 1024. */
  dimensions?: number;
  /** Non-zero entries (±1) of each random elemental vector. Default 10. */
  seedLength?: number;
  /** Reflective cycles: document → term → document … Default 2. */
  cycles?: number;
  /** Seed of the random elemental vectors; the same seed and corpus give the same model. Default 1. */
  seed?: number;
  /** Weight of the TF-IDF cosine in blend (the rest is RRI). Default 0.7. */
  blendWeight?: number;
}

/** A text as the model sees it; compare two with `model.similarity`. */
export interface TopicVector {
  /** TF-IDF weights by term, unit length (empty for method rri). */
  terms: Map<string, number>;
  /** RRI topic vector, unit length, or null (method tfidf, or no known term). */
  dense: Float32Array | null;
}

/** A part of a unit with its weight, e.g. the question 1, its solutions and comments lower. */
export interface WeightedText {
  text: string;
  /** Multiplies the part's term counts. Default 1. */
  weight?: number;
}

export interface SimilarityModel {
  readonly method: SimilarityMethod;
  /** Number of documents the model was built from. */
  readonly documents: number;
  /** A text, or the weighted parts of one unit (title and body above comments: they stay on topic). */
  vectorize(text: string | readonly WeightedText[], language?: Language): TopicVector;
  /** Cosine similarity in [0, 1]: 1 for the same topic vector, near 0 for unrelated texts. */
  similarity(a: TopicVector, b: TopicVector): number;
}

/** A small fast PRNG (mulberry32): uniform numbers in [0, 1), the same sequence for a seed on every machine. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normalize(vector: Float32Array): boolean {
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm === 0) return false;
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < vector.length; i++) vector[i]! *= inv;
  return true;
}

/** Weighted term counts of a text or of the weighted parts of one unit. */
export function termCounts(text: string | readonly WeightedText[], options: TokenizeOptions = {}): Map<string, number> {
  const result = new Map<string, number>();
  for (const part of typeof text === 'string' ? [{ text }] : text) {
    const weight = part.weight ?? 1;
    if (weight <= 0) continue;
    for (const t of tokenize(part.text, options)) result.set(t, (result.get(t) ?? 0) + weight);
  }
  return result;
}

/** The unit-length TF-IDF vector of term counts: log(1 + tf) · idf(term). */
export function tfidfVector(counts: Map<string, number>, idf: (term: string) => number): Map<string, number> {
  const terms = new Map<string, number>();
  let norm = 0;
  for (const [term, f] of counts) {
    const w = Math.log1p(f) * idf(term);
    if (w <= 0) continue;
    terms.set(term, w);
    norm += w * w;
  }
  if (norm > 0) for (const [term, w] of terms) terms.set(term, w / Math.sqrt(norm));
  return terms;
}

/** Cosine of two sparse vectors that are already unit length. */
export function sparseCosine(a: Map<string, number>, b: Map<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [term, w] of small) {
    const v = large.get(term);
    if (v !== undefined) dot += w * v;
  }
  return Math.min(1, Math.max(0, dot));
}

/** Cosine of two dense unit vectors, clamped to [0, 1]: opposite topics are as unrelated as orthogonal ones. */
export function denseCosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return Math.min(1, Math.max(0, dot));
}

/**
 * Builds a similarity model from a corpus (the questions of one knowledge network): document
 * frequencies for TF-IDF and, for rri/blend, term vectors by reflective random indexing (Cohen,
 * Schvaneveldt and Widdows 2010): each document gets a sparse random elemental vector; a term's
 * vector is the weighted sum of the documents it occurs in; documents are then rebuilt from their
 * terms' vectors and the terms from those documents, `cycles` times. Terms that share contexts end
 * up with close vectors, so two questions can match without sharing a word. Deterministic for a
 * given corpus, options and seed; nothing is downloaded.
 */
export function buildModel(documents: readonly SimilarityDocument[], options: ModelOptions = {}): SimilarityModel {
  const method = options.method ?? 'blend';
  const language = options.language ?? 'en';
  const stem = options.stem ?? false;
  const blendWeight = method === 'tfidf' ? 1 : method === 'rri' ? 0 : (options.blendWeight ?? 0.7);
  const tokenized = documents.map((d) => termCounts(d.text, { language: d.language ?? language, stem }));
  const documentFrequency = new Map<string, number>();
  for (const doc of tokenized) for (const term of doc.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const n = documents.length;
  // Unknown terms get the idf of a term seen once: a rare word in a query is informative even if new.
  const idf = (term: string) => Math.log((n + 1) / ((documentFrequency.get(term) ?? 0) + 0.5));
  const weight = (term: string, tf: number) => Math.log1p(tf) * idf(term);

  const dimensions = options.dimensions ?? 1024;
  const termVectors =
    blendWeight < 1
      ? trainRri(tokenized, weight, dimensions, options.seedLength ?? 10, options.cycles ?? 2, options.seed ?? 1)
      : new Map<string, Float32Array>();

  const vectorize = (text: string | readonly WeightedText[], textLanguage?: Language): TopicVector => {
    const tf = termCounts(text, { language: textLanguage ?? language, stem });
    const terms = blendWeight > 0 ? tfidfVector(tf, idf) : new Map<string, number>();
    let dense: Float32Array | null = null;
    if (blendWeight < 1) {
      dense = new Float32Array(dimensions);
      for (const [term, f] of tf) {
        const vector = termVectors.get(term);
        if (!vector) continue;
        const w = weight(term, f);
        for (let i = 0; i < dimensions; i++) dense[i]! += w * vector[i]!;
      }
      if (!normalize(dense)) dense = null;
    }
    return { terms, dense };
  };

  const similarity = (a: TopicVector, b: TopicVector): number => {
    const lexical = blendWeight > 0 ? sparseCosine(a.terms, b.terms) : 0;
    // A text of words the corpus never saw has no topic vector; its words alone decide.
    if (!a.dense || !b.dense) return blendWeight > 0 ? lexical : 0;
    return blendWeight * lexical + (1 - blendWeight) * denseCosine(a.dense, b.dense);
  };

  return { method, documents: n, vectorize, similarity };
}

function trainRri(
  documents: Map<string, number>[],
  weight: (term: string, tf: number) => number,
  dimensions: number,
  seedLength: number,
  cycles: number,
  seed: number,
): Map<string, Float32Array> {
  const next = mulberry32(seed);
  let documentVectors = documents.map(() => {
    const v = new Float32Array(dimensions);
    for (let k = 0; k < seedLength; k++) v[Math.floor(next() * dimensions)]! += k % 2 === 0 ? 1 : -1;
    return v;
  });
  let termVectors = new Map<string, Float32Array>();
  for (let cycle = 0; cycle < cycles; cycle++) {
    termVectors = new Map();
    documents.forEach((doc, d) => {
      const docVector = documentVectors[d]!;
      for (const [term, tf] of doc) {
        let vector = termVectors.get(term);
        if (!vector) {
          vector = new Float32Array(dimensions);
          termVectors.set(term, vector);
        }
        const w = weight(term, tf);
        for (let i = 0; i < dimensions; i++) vector[i]! += w * docVector[i]!;
      }
    });
    for (const vector of termVectors.values()) normalize(vector);
    if (cycle === cycles - 1) break;
    documentVectors = documents.map((doc) => {
      const v = new Float32Array(dimensions);
      for (const [term, tf] of doc) {
        const t = termVectors.get(term)!;
        const w = weight(term, tf);
        for (let i = 0; i < dimensions; i++) v[i]! += w * t[i]!;
      }
      normalize(v);
      return v;
    });
  }
  return termVectors;
}
