import { SearchFieldNames } from '@kn/contracts';
import { Accumulator, fieldWeights, type TermIndex } from '../local/postings.ts';
import type { SearchStore } from '../local/store.ts';
import { textCounts } from '../words.ts';
import type { MatchRequest } from './match.ts';
import { bm25Idf, topSlots } from './ranking.ts';

/** Question search reads this much of a text (the interface's query length). */
const MAX_QUERY = 1000;

/**
 * Similar questions by overall topic: a question with its title, description, tags, solutions
 * and (weakly) comments is one unit (postings.ts unitWeights), compared as TF-IDF vectors
 * (log(1 + tf) · log((N + 1) / (df + 0.5))) by cosine similarity. Document frequencies come from
 * the live index (postings.ts unitIdf), so a new question counts at once.
 */

/** Similar-question search's parameters beyond the unit's field weights (postings.ts unitFieldWeights), cross-validated. */
export const similarParameters = {
  /**
   * Pseudo-relevance feedback (Rocchio): the unit vectors of the `documents` most similar
   * questions, averaged, join the asked vector at `weight` before the candidates are ranked again:
   * the topic of a short text becomes the topic of the questions it found. 0: none.
   */
  feedback: { documents: 5, weight: 0.5 },
  /**
   * How questions similar to a text are ranked: 'search', question search's ranking of the text (BM25
   * over the weighted fields, stems, and the similarity blend on top: match.ts), or 'cosine', the
   * unit cosine of `similarTo` alone. A question's similar questions are always by `similarTo`: a
   * question's unit holds its answers, which a text has not.
   */
  textRanking: 'search' as 'search' | 'cosine',
};

/** The question search that ranks questions similar to a text (textRanking 'search'): every field, either word. */
export function similarTextRequest(text: string, language: string | undefined, limit: number): MatchRequest {
  return {
    query: text.slice(0, MAX_QUERY),
    operator: 'OR',
    fields: [...SearchFieldNames],
    stop_languages: language ? [language] : [],
    filter: { tag_operator: 'AND', include_uncategorized: false, include_deleted: false },
    offset: 0,
    limit,
  };
}
/** A question search's score (near 1 for a typical match) as a similarity in [0, 1). */
export const similarityOfScore = (score: number) => Math.max(0, score) / (1 + Math.max(0, score));

/**
 * Candidates: the questions sharing the most informative words of the unit, by BM25. Similar-question
 * search itself looks at 500 (in a small network a related question may share only common words);
 * the neighbours that expert search and tag suggestions read need no more than 200.
 */
export const candidateCount = (thorough: boolean) => (thorough ? 500 : 200);
export const CANDIDATE_TERMS = 24;
/**
 * Candidates come from at least this many words, and from more while their postings fit
 * CANDIDATE_POSTINGS: a long text's common words would cost milliseconds and bring candidates
 * whose cosine is low anyway (expert search at 100,000 questions: p50 6.3 → 2.3 ms, same quality
 * on the beer site).
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
export function withFeedback(index: TermIndex, vector: TopicVector, ranked: readonly number[]): TopicVector {
  const { documents, weight } = similarParameters.feedback;
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
 * pseudo-relevance feedback; without it, the plain neighbours (tag suggestions).
 */
export function similarTo(
  store: SearchStore,
  source: { question_id?: number; text?: string; language?: string },
  limit: number,
  thorough = false,
  /** Knowledge spaces whose questions are never candidates (the caller's closed ones). */
  hidden?: ReadonlySet<number>,
): Array<{ id: number; score: number }> {
  const { index } = store;
  const self = source.question_id === undefined ? -1 : index.slotOf(source.question_id);
  const vector = source.question_id !== undefined ? questionVector(index, self) : textVector(index, source.text ?? '', source.language);
  if (!vector?.ids.length) return [];
  const slots = candidateSlots(index, vector, self, candidateCount(thorough), hidden);
  const scores = index.withWordsOf(slots, () => {
    const plain = cosines(index, slots, vector);
    if (!thorough || similarParameters.feedback.documents <= 0 || !slots.length) return plain;
    const best = slots
      .map((slot, i) => ({ slot, score: plain[i]! }))
      .sort((a, b) => b.score - a.score)
      .map((b) => b.slot);
    return cosines(index, slots, withFeedback(index, vector, best));
  });
  return slots
    .map((slot, i) => ({ id: index.questionId(slot), score: scores[i]! }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || b.id - a.id)
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

/**
 * A bag of words as a unit-length topic vector by word (log(1 + tf) · idf), for an index that
 * keeps words as strings (Elasticsearch); words of weight 0 or less are left out.
 */
export function topicVector(counts: Iterable<readonly [string, number]>, idf: (word: string) => number): Map<string, number> {
  const vector = new Map<string, number>();
  let norm = 0;
  for (const [word, count] of counts) {
    const w = Math.log1p(count) * idf(word);
    if (w <= 0) continue;
    vector.set(word, w);
    norm += w * w;
  }
  const length = Math.sqrt(norm);
  if (length > 0) for (const [word, w] of vector) vector.set(word, w / length);
  return vector;
}

/** withFeedback for vectors by word (Elasticsearch): `ranked` are the neighbours' unit vectors, best first. */
export function withFeedbackOf(
  vector: ReadonlyMap<string, number>,
  ranked: ReadonlyArray<ReadonlyMap<string, number>>,
): Map<string, number> {
  const { documents, weight } = similarParameters.feedback;
  const top = ranked.slice(0, documents);
  const sum = new Map(vector);
  if (!top.length || weight <= 0) return sum;
  for (const v of top) for (const [word, w] of v) sum.set(word, (sum.get(word) ?? 0) + (weight * w) / top.length);
  const length = Math.sqrt([...sum.values()].reduce((n, w) => n + w * w, 0));
  if (length > 0) for (const [word, w] of sum) sum.set(word, w / length);
  return sum;
}

/** The cosine of two unit-length topic vectors, in [0, 1]. */
export function cosine(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [word, w] of small) dot += w * (large.get(word) ?? 0);
  return Math.min(1, Math.max(0, dot));
}
