import { SearchFieldNames } from '@kn/contracts';
import type { MatchRequest } from './match.ts';

/** Question search reads this much of a text (the interface's query length). */
const MAX_QUERY = 1000;

/**
 * Similar questions by overall topic: a question with its title, description, tags, solutions
 * and (weakly) comments is one unit (domain/fields.ts unitFieldWeights), compared as TF-IDF vectors
 * (log(1 + tf) · log((N + 1) / (df + 0.5))) by cosine similarity. Document frequencies come from
 * the live index (ranking.ts unitIdf), so a new question counts at once.
 */

/**
 * Pseudo-relevance feedback (Rocchio), cross-validated (bench/retrieval-cv.ts): the unit vectors
 * of the `documents` most similar questions, averaged, join the asked vector at `weight` before the
 * candidates are ranked again: the topic of a short text becomes the topic of the questions it
 * found. 0: none.
 */
export const relevanceFeedback: Readonly<Feedback> = Object.freeze({ documents: 5, weight: 0.5 });
export interface Feedback {
  documents: number;
  weight: number;
}

/**
 * The question search that ranks questions similar to a text: every field, either word. A
 * question's similar questions are by the unit cosine (similarTo): its unit holds its answers,
 * which a text has not.
 */
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
  feedback: Readonly<Feedback> = relevanceFeedback,
): Map<string, number> {
  const { documents, weight } = feedback;
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
