import { SearchFieldNames } from '@kn/contracts';
import { textCounts } from '../core/words.ts';
import { bm25Idf } from '../domain/ranking.ts';
import { blendSimilar, MEANING_ONLY_MIN, type Meaning, type SemanticWeights, semanticWeights } from '../domain/semantic.ts';
import { CANDIDATE_TERMS, candidateCount, type Feedback, relevanceFeedback } from '../domain/similarity.ts';
import { Accumulator, fieldWeights, type TermIndex } from './postings.ts';
import { topSlots } from './ranking.ts';
import type { SearchStore } from './store.ts';

/**
 * Candidates come from at least this many words, and from more while their postings fit
 * CANDIDATE_POSTINGS: a long text's common words would cost milliseconds and bring candidates
 * whose cosine is low anyway.
 */
const CANDIDATE_MIN_TERMS = 4;
const CANDIDATE_POSTINGS = 20_000;
const allFields = fieldWeights(Object.fromEntries(SearchFieldNames.map((f) => [f, 1])));
const candidates = new Accumulator();

/** A unit-length TF-IDF vector over the index's words (words the index does not know only lengthen it). */
export interface TopicVector {
  ids: number[];
  weights: number[];
}

function normalised(ids: number[], weights: number[], norm: number): TopicVector {
  const length = Math.sqrt(norm);
  return { ids, weights: length > 0 ? weights.map((w) => w / length) : weights };
}

/** The topic vector of a free text in a language (its stop words left out). */
export function textVector(index: TermIndex, text: string, language?: string): TopicVector {
  return weightedText(index, text, language, (id) => index.unitIdf(id));
}

/**
 * A text's words weighted by log(1 + count) · idf and normalised; a word the index does not know
 * still counts in the norm (it makes the text's other words weigh less), as it would in the unit.
 */
function weightedText(index: TermIndex, text: string, language: string | undefined, idf: (id: number) => number): TopicVector {
  const ids: number[] = [];
  const weights: number[] = [];
  let norm = 0;
  for (const [term, count] of textCounts(text, language)) {
    const id = index.termId(term);
    const w = Math.log1p(count) * idf(id);
    if (w <= 0) continue;
    norm += w * w;
    if (id >= 0) {
      ids.push(id);
      weights.push(w);
    }
  }
  return normalised(ids, weights, norm);
}

/** The topic vector of an indexed question's unit (null when it is not indexed). */
export function questionVector(index: TermIndex, slot: number): TopicVector | null {
  if (!index.holds(slot)) return null;
  const ids: number[] = [];
  const weights: number[] = [];
  let norm = 0;
  index.forEachUnitWeight(slot, (id, w) => {
    ids.push(id);
    weights.push(w);
    norm += w * w;
  });
  return normalised(ids, weights, norm);
}

let dense = new Float64Array(0);

/** Cosine similarity of indexed questions (by slot) with a vector, in [0, 1]. */
export function cosines(index: TermIndex, slots: readonly number[], vector: TopicVector): number[] {
  if (dense.length < index.termCount) dense = new Float64Array(Math.max(index.termCount, dense.length * 2));
  vector.ids.forEach((id, i) => {
    dense[id] = vector.weights[i]!;
  });
  try {
    return index.withWordsOf(slots, () => slots.map((slot) => index.unitCosine(slot, dense)));
  } finally {
    for (const id of vector.ids) dense[id] = 0;
  }
}

/**
 * Pseudo-relevance feedback: the vector joined by the mean unit vector of the first
 * `feedback.documents` of `ranked` (slots, best first) at `feedback.weight`, unit length again.
 */
export function withFeedback(index: TermIndex, vector: TopicVector, ranked: readonly number[], feedback: Readonly<Feedback>): TopicVector {
  const { documents, weight } = feedback;
  const top = ranked.slice(0, documents);
  if (!top.length || weight <= 0) return vector;
  const sum = new Map<number, number>();
  vector.ids.forEach((id, i) => {
    sum.set(id, vector.weights[i]!);
  });
  for (const slot of top) {
    const v = questionVector(index, slot);
    v?.ids.forEach((id, i) => {
      sum.set(id, (sum.get(id) ?? 0) + (weight * v.weights[i]!) / top.length);
    });
  }
  const weights = [...sum.values()];
  return normalised(
    [...sum.keys()],
    weights,
    weights.reduce((n, w) => n + w * w, 0),
  );
}

/** Candidates for a vector: the `count` questions sharing its most informative words, by BM25 (not `self`, not deleted). */
function candidateSlots(index: TermIndex, vector: TopicVector, self: number, count: number, hidden?: ReadonlySet<number>): number[] {
  const informative = vector.ids
    .map((id, i) => ({ id, w: vector.weights[i]!, word: index.term(id) }))
    // Equal weights in the order of the words, not of their ids (which depend on what arrived first).
    .sort((a, b) => b.w - a.w || (a.word < b.word ? -1 : 1))
    .slice(0, CANDIDATE_TERMS);
  candidates.reset(index.slotCount);
  const n = index.count;
  // The most informative words first, until the budget of postings is spent (at least a few words).
  let postings = 0;
  for (const [k, { id }] of informative.entries()) {
    const frequency = index.documentFrequency(id);
    if (k >= CANDIDATE_MIN_TERMS && postings + frequency > CANDIDATE_POSTINGS) continue;
    postings += frequency;
    index.scoreTerm(id, bm25Idf(n, frequency), allFields, 1, candidates);
  }
  return topSlots(index, candidates, count, (slot) => slot !== self && !index.isDeleted(slot) && !hidden?.has(index.spaceOf(slot))).map(
    (c) => c.slot,
  );
}

/**
 * Published, live questions most similar to a question or a text, best first, with their cosine.
 * `thorough` (similar-question search and its blend into question search): more candidates and
 * pseudo-relevance feedback (`feedback`, relevanceFeedback unless a benchmark passes another);
 * without it, the plain neighbours (tag suggestions). `hidden`: knowledge spaces whose questions
 * are never candidates (the caller's closed ones).
 */
export function similarTo(
  store: SearchStore,
  source: { question_id?: number; text?: string; language?: string },
  limit: number,
  options: {
    thorough?: boolean;
    hidden?: ReadonlySet<number>;
    feedback?: Readonly<Feedback>;
    /** The source's meaning: the words' cosine is blended with the embeddings' (domain/semantic.ts). */
    meaning?: Meaning;
    semantic?: Readonly<SemanticWeights>;
  } = {},
): Array<{ id: number; score: number }> {
  const { thorough = false, hidden, feedback = relevanceFeedback, meaning, semantic = semanticWeights } = options;
  const { index } = store;
  const self = source.question_id === undefined ? -1 : index.slotOf(source.question_id);
  const vector = source.question_id !== undefined ? questionVector(index, self) : textVector(index, source.text ?? '', source.language);
  if (source.question_id !== undefined && !vector) return [];
  const slots = vector?.ids.length ? candidateSlots(index, vector, self, candidateCount(thorough), hidden) : [];
  // Questions that say the same in other words: the nearest in meaning join the candidates.
  if (meaning) {
    const known = new Set(slots);
    const accept = (id: number) => {
      const slot = index.slotOf(id);
      return slot !== self && index.holds(slot) && !index.isDeleted(slot) && !hidden?.has(index.spaceOf(slot)) && !known.has(slot);
    };
    for (const near of meaning.nearest(limit, accept)) if (near.score >= MEANING_ONLY_MIN) slots.push(index.slotOf(near.id));
  }
  if (!slots.length || !vector) return [];
  const scores = index.withWordsOf(slots, () => {
    const plain = cosines(index, slots, vector);
    if (!thorough || feedback.documents <= 0 || !slots.length) return plain;
    const best = slots
      .map((slot, i) => ({ slot, score: plain[i]! }))
      .sort((a, b) => b.score - a.score)
      .map((b) => b.slot);
    return cosines(index, slots, withFeedback(index, vector, best, feedback));
  });
  const found = slots.map((slot, i) => ({ id: index.questionId(slot), score: scores[i]! }));
  return blendSimilar(found, meaning, semantic.similar)
    .filter((r) => r.score > 0)
    .slice(0, limit);
}

/**
 * Published, live questions whose question (what was asked: title twice, description, tags) is
 * similar to a text, with their cosine (rounded, so that the order words arrived in cannot tell
 * equals apart), in no order: expert search's neighbours. Their answers are not compared: they
 * are by the people expert search looks for, and come later. When the text is a question's
 * (`self`), the index is read as if that question were not in it yet (whether it is depends on
 * how fast its event came).
 */
export function askedSimilarTo(
  store: SearchStore,
  text: string,
  language: string | undefined,
  self?: number,
  /** Knowledge spaces whose questions are never candidates (the caller's closed ones). */
  hidden?: ReadonlySet<number>,
): Array<{ id: number; score: number; time: number }> {
  const { index } = store;
  const selfSlot = self === undefined ? -1 : index.slotOf(self);
  const own = index.holds(selfSlot) ? index.askedTerms(selfSlot) : null;
  const documents = index.count - (own ? 1 : 0);
  // Its own words are one question rarer without it.
  const logN = Math.log(documents + 1);
  const idf = (id: number) => logN - (own?.has(id) ? Math.log(index.askedFrequency(id) - 0.5) : index.askedLogDf(id));
  const vector = weightedText(index, text, language, idf);
  if (!vector.ids.length) return [];
  const slots = candidateSlots(index, vector, selfSlot, candidateCount(false), hidden);
  if (dense.length < index.termCount) dense = new Float64Array(Math.max(index.termCount, dense.length * 2));
  vector.ids.forEach((id, i) => {
    dense[id] = vector.weights[i]!;
  });
  try {
    return slots
      .map((slot) => ({
        id: index.questionId(slot),
        score: Math.round(index.askedCosine(slot, dense, documents, own ?? undefined) * 1e12) / 1e12,
        time: index.timeOf(slot),
      }))
      .filter((r) => r.score > 0);
  } finally {
    for (const id of vector.ids) dense[id] = 0;
  }
}
