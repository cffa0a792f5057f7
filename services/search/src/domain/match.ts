import type { SearchField } from '@kn/contracts';

/**
 * Question search's rules, whatever engine ranks: how much another form of a word counts, the
 * similarity blend, when a match is relevant or weak, the page and the window.
 */

/**
 * How much a query word counts when a question has only another form of it, as a share of the
 * whole word: a word of the same stem, a word one or two edits away (a typo), a word the query
 * word begins (3+ characters). A question counts the best form it has of each query word. The
 * stem weight is chosen by cross-validation (bench/retrieval-cv.ts); a typo ranks below a stem and
 * a prefix much lower than a whole word, as the interface says.
 */
export const formWeights: Readonly<FormWeights> = Object.freeze({ stem: 0.7, typo: 0.3, prefix: 0.1 });
export interface FormWeights {
  stem: number;
  typo: number;
  prefix: number;
}
/**
 * The similarity blend: `weight` times the cosine (in [0, 1]) of the query text with a question's
 * unit, and `topics` times the cosine of their topic vectors (topics.ts), lift the
 * calibrated text score of the `depth` best text matches (liftScores). Cross-validated
 * (bench/retrieval-cv.ts).
 */
export const similarityBlend: Readonly<SimilarityBlend> = Object.freeze({ weight: 2, depth: 50, topics: 2 });
export interface SimilarityBlend {
  weight: number;
  depth: number;
  topics: number;
}
/**
 * Whether a search of these fields is blended: only one that reads the whole of what a unit holds
 * (title, description, tags, solutions). A search of fewer fields asks where words stand, and
 * ranks by the text match alone.
 */
export const blendsSimilarity = (fields: readonly SearchField[]) =>
  (['title', 'description', 'tags', 'solutions'] as const).every((f) => fields.includes(f));
/** A question found only by similarity scores this times its cosine: after the text matches. */
const SIMILAR_ONLY_WEIGHT = 0.15;

/**
 * Multiplies each of the first `lifts.length` items' score by e^(lift − mean lift), and sorts (both
 * backends). Centred, the blend reorders the best matches without moving their scores as a whole,
 * and a score stays positive: it keeps saying where the words matched (a title match above 1, a
 * comment match below).
 */
export function liftScores(items: Match[], lifts: readonly number[]) {
  const mean = lifts.reduce((sum, l) => sum + l, 0) / Math.max(1, lifts.length);
  lifts.forEach((lift, i) => {
    items[i]!.score *= Math.exp(lift - mean);
  });
  items.sort((a, b) => b.score - a.score || b.id - a.id);
}

/** A question found only by similarity, as a match. */
export const similarOnly = (id: number, cosine: number): Match => ({ id, score: SIMILAR_ONLY_WEIGHT * cosine, is_relevant: false });
/** Scores at or above this count as relevant; they also decide when weak matches are left out. */
export const RELEVANT_SCORE = 0.8;
/** When at least a page of results is relevant, results below this score are left out. */
export const WEAK_SCORE = 0.25;
export const PAGE = 10;
/** A question found only by similarity needs at least this cosine. */
export const SIMILAR_ONLY_MIN = 0.1;

export interface MatchFilter {
  languages?: string[];
  /** Closed knowledge spaces the caller is not a member of. */
  hidden_spaces?: number[];
  tags?: string[];
  tag_operator: 'AND' | 'OR';
  categories?: number[];
  include_uncategorized: boolean;
  knowledge_space?: number;
  include_deleted: boolean;
}

export interface MatchRequest {
  query: string;
  operator: 'AND' | 'OR';
  fields: SearchField[];
  stop_languages: string[];
  filter: MatchFilter;
  offset: number;
  limit: number;
}

/** Relevance considers this many of the best matches; `total` counts them, paging stays inside them. */
export const WINDOW = 1000;

export interface Match {
  id: number;
  score: number;
  is_relevant: boolean;
}

/** The page asked for of a ranking (both backends): weak matches left out when asked, relevance marked. */
export function pageOf(items: Match[], options: { total: number; leaveOutWeak: boolean; offset: number; limit: number }) {
  const kept = options.leaveOutWeak ? items.filter((i) => i.score >= WEAK_SCORE) : items;
  for (const item of kept) {
    item.score = Math.max(item.score, 1e-9);
    item.is_relevant = item.score >= RELEVANT_SCORE;
  }
  return { total: options.total, items: kept.slice(options.offset, options.offset + options.limit) };
}
