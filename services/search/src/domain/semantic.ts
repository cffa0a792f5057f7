import type { ExpertEvidence } from './experts.ts';

/**
 * What a question means, as ranking reads it: the cosine of a query's embedding (a sentence
 * encoder's vector, semantic/) with a question's, beside the word statistics. Engine-free: both
 * engines pass their candidates through the same functions.
 */

/** A query's meaning: its embedding compared with the questions'. */
export interface Meaning {
  /** The cosine with a question's embedding; undefined while that question has none (not embedded yet). */
  cosine(id: number): number | undefined;
  /** The `k` questions nearest in meaning that `accept` lets in, with their cosine, best first. */
  nearest(k: number, accept: (id: number) => boolean): Array<{ id: number; score: number }>;
}

export interface SemanticWeights {
  /** The share of a similar question's score that is the cosine of the embeddings (the rest: the words' cosine). */
  similar: number;
  /** How much the cosine of the embeddings lifts question search's best text matches (beside similarityBlend's). */
  lift: number;
  /** The share of the embeddings' cosine in a text's similar questions (the rest: question search's score of the text as a similarity). */
  text: number;
  /** The share of the embeddings' cosine in how close expert search's neighbours are (withMeaning). */
  experts: number;
}
/**
 * `similar`, `lift` and `text` chosen by two-fold cross-validation on SemEval-2016
 * (bench/retrieval-cv.ts); `experts` set as `similar` and checked by bench/experts-quality.ts.
 */
export const semanticWeights: Readonly<SemanticWeights> = Object.freeze({ similar: 0.4, lift: 4, text: 0.4, experts: 0.4 });

/**
 * A question found by its meaning alone (no word of the query, or too few text matches) needs at
 * least this cosine: with all-MiniLM-L6-v2 questions on other topics of one network score up to
 * about 0.35, rewordings 0.45–0.75.
 */
export const MEANING_ONLY_MIN = 0.4;

/**
 * Similar questions scored by the words and the meaning: (1 − w) · words + w · cosine; a question
 * not embedded yet keeps the words' score (backfill under way). Sorted best first.
 */
export function blendSimilar<T extends { id: number; score: number }>(items: T[], meaning: Meaning | undefined, weight: number): T[] {
  if (meaning && weight > 0)
    for (const item of items) {
      const cosine = meaning.cosine(item.id);
      if (cosine !== undefined) item.score = (1 - weight) * item.score + weight * Math.max(0, cosine);
    }
  return items.sort((a, b) => b.score - a.score || b.id - a.id);
}

/**
 * The meaning's part of question search's lift for each id: weight × cosine; a question without an
 * embedding gets the mean of the others, so that it is neither lifted nor pushed down.
 */
export function meaningLifts(ids: readonly number[], meaning: Meaning | undefined, weight: number): number[] {
  if (!meaning || weight <= 0) return ids.map(() => 0);
  const cosines = ids.map((id) => meaning.cosine(id));
  const known = cosines.filter((c) => c !== undefined);
  const mean = known.length ? known.reduce((sum, c) => sum + c, 0) / known.length : 0;
  return cosines.map((c) => weight * (c ?? mean));
}

/**
 * Expert evidence whose neighbours (the questions like the one asked, whose answerers are
 * candidates) are ranked by the words and the meaning (blendSimilar at `weight`): the words' best
 * NEIGHBOUR_POOL times as many re-scored, the best `limit` kept. The expert model learns from the
 * same evidence in its fit (expert-history.ts), so how much closeness in meaning counts is the
 * network's own.
 */
export function withMeaning(evidence: ExpertEvidence, meaning: Meaning | undefined, weight: number): ExpertEvidence {
  if (!meaning || weight <= 0) return evidence;
  return {
    clock: () => evidence.clock(),
    neighbours: async (text, language, limit, self) => {
      const found = await evidence.neighbours(text, language, limit * NEIGHBOUR_POOL, self);
      return blendSimilar(
        found.map((n) => ({ ...n })),
        meaning,
        weight,
      ).slice(0, limit);
    },
    namedTags: (text) => evidence.namedTags(text),
    tags: (keys) => evidence.tags(keys),
    onTags: (keys) => evidence.onTags(keys),
    answers: () => evidence.answers(),
    askerRecord: (asker, now) => evidence.askerRecord(asker, now),
    users: (ids) => evidence.users(ids),
    minExperts: () => evidence.minExperts(),
    answered: (users) => evidence.answered(users),
    closeness: (id) => meaning.cosine(id),
  };
}
const NEIGHBOUR_POOL = 3;
