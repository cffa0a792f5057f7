import { type SearchField, SearchFieldNames } from '@kn/contracts';
import type { SearchStore } from '../index/store.ts';
import { queryVector, similarity, similarTo } from './similarity.ts';
import { phrase, queryTerms } from './terms.ts';

/**
 * Field weights of the BM25 ranking (FTS5 `bm25()` multiplies a field's term frequency by its
 * weight). With k1 = 1.2 a title hit saturates near 2 × idf, a hit in a description of average
 * length gives 1 × idf, a comment or attachment hit about 0.3 × idf: after calibration (score =
 * bm25 / reference) title matches land clearly above 1.0 and comment-only matches clearly below.
 */
export const fieldWeights: Record<SearchField, number> = {
  title: 10,
  description: 1,
  tags: 6,
  solutions: 0.7,
  comments: 0.25,
  attachments: 0.25,
};
/** A word matched only by a prefix (3+ characters) counts this much of a whole-word match. */
export const PREFIX_WEIGHT = 0.1;
/** Weight of the similarity (cosine in [0, 1]) added to the calibrated text score. */
export const SIMILARITY_WEIGHT = 0.15;
/** How many of the best text matches get the similarity added. */
const SIMILARITY_DEPTH = 20;
/** Scores at or above this count as relevant; they also decide when weak matches are left out. */
export const RELEVANT_SCORE = 0.8;
/** When at least a page of results is relevant, results below this score are left out. */
const WEAK_SCORE = 0.25;
const PAGE = 10;
/** A question found only by similarity needs at least this cosine. */
const SIMILAR_ONLY_MIN = 0.1;

export interface MatchFilter {
  languages?: string[];
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
  limit: number;
}

export interface Match {
  id: number;
  score: number;
  is_relevant: boolean;
}

const weightList = SearchFieldNames.map((f) => fieldWeights[f]).join(', ');
const similarityFields: SearchField[] = ['title', 'description', 'tags', 'solutions'];

/** The filters as a test of a question's facets (the index keeps them in memory). */
function facetFilter(store: SearchStore, filter: MatchFilter): (id: number) => boolean {
  const languages = filter.languages?.length ? new Set(filter.languages) : null;
  const categories = filter.categories?.length ? new Set(filter.categories) : null;
  const labels = [...new Set((filter.tags ?? []).map((t) => t.toLowerCase()))];
  return (id) => {
    const f = store.facets.get(id);
    if (!f) return false;
    if (f.is_deleted && !filter.include_deleted) return false;
    if (languages && !languages.has(f.language)) return false;
    if (filter.knowledge_space !== undefined && f.knowledge_space_id !== filter.knowledge_space) return false;
    if (categories || filter.include_uncategorized) {
      const inCategory = f.category_id !== null && (categories?.has(f.category_id) ?? false);
      if (!inCategory && !(filter.include_uncategorized && f.category_id === null)) return false;
    }
    if (labels.length && (filter.tag_operator === 'OR' ? !labels.some((l) => f.tags.has(l)) : !labels.every((l) => f.tags.has(l))))
      return false;
    return true;
  };
}

/** FTS5 inverse document frequency (the one `bm25()` uses), so the calibration matches the ranking. */
function idf(store: SearchStore, term: string, df = store.documentFrequency(term)): number {
  const n = store.documentCount;
  const value = Math.log((n - df + 0.5) / (df + 0.5));
  return value > 0 ? value : 1e-6;
}

/**
 * BM25 costs about 0.7 µs per matching question on this machine (it scores every match): up to
 * this many matches are scored exactly; beyond, the most common words are left out of an OR query
 * (they rank nothing the rarer ones do not: Lucene's common-terms cutoff), and a query of only
 * such words scores its newest matches.
 */
export const MAX_SCORED = 10_000;
/** How many of the newest matches a query of only very common words (or a prefix pass) scores. */
export const NEWEST_WINDOW = 3_000;

/** Matches of an FTS5 expression with their BM25, best first, filtered. `newest` scores only the newest matches. */
function ranked(
  store: SearchStore,
  expression: string,
  keep: (id: number) => boolean,
  limit: number,
  newest: boolean,
  selective: boolean,
): Array<{ id: number; raw: number }> {
  const rows = newest
    ? store.all<{ id: number; raw: number }>(
        `select rowid as id, -bm25(question_fts, ${weightList}) as raw from question_fts where question_fts match ? order by rowid desc limit ?`,
        expression,
        NEWEST_WINDOW,
      )
    : selective
      ? store.all<{ id: number; raw: number }>(
          `select rowid as id, -bm25(question_fts, ${weightList}) as raw from question_fts where question_fts match ?`,
          expression,
        )
      : // Only deleted questions to leave out: the best twice the limit are enough.
        store.all<{ id: number; raw: number }>(
          `select rowid as id, -bm25(question_fts, ${weightList}) as raw from question_fts where question_fts match ? order by raw desc limit ?`,
          expression,
          limit * 2,
        );
  return rows
    .filter((r) => keep(r.id))
    .sort((a, b) => b.raw - a.raw || b.id - a.id)
    .slice(0, limit);
}

/**
 * Full-text search over the index: BM25 over the weighted fields, whole words first and prefixes
 * of 3+ characters much lower, calibrated so that one query's scores centre near 1.0, blended with
 * the similarity of the best matches at a low weight. Returns at most `limit` matches, best first.
 */
export function matchQuestions(store: SearchStore, request: MatchRequest): { total: number; items: Match[] } {
  const terms = queryTerms(request.query, request.stop_languages);
  const fields = SearchFieldNames.filter((f) => request.fields.includes(f));
  if (!terms.length || !fields.length) return { total: 0, items: [] };
  const scope = fields.length === SearchFieldNames.length ? '' : `{${fields.join(' ')}} : `;
  const keep = facetFilter(store, request.filter);
  const { filter } = request;
  const selective = Boolean(
    filter.languages?.length ||
      filter.tags?.length ||
      filter.categories?.length ||
      filter.include_uncategorized ||
      filter.knowledge_space !== undefined,
  );
  const frequency = new Map(terms.map((t) => [t, store.documentFrequency(t)]));
  let scored = terms;
  let newest: boolean;
  if (request.operator === 'OR') {
    scored = [...terms].sort((a, b) => frequency.get(a)! - frequency.get(b)!);
    while (scored.length > 1 && scored.reduce((n, t) => n + frequency.get(t)!, 0) > MAX_SCORED) scored = scored.slice(0, -1);
    newest = frequency.get(scored[0]!)! > MAX_SCORED;
  } else newest = Math.min(...terms.map((t) => frequency.get(t)!)) > MAX_SCORED;
  const join = ` ${request.operator} `;
  const exact = ranked(store, `${scope}(${scored.map(phrase).join(join)})`, keep, request.limit, newest, selective);
  const scores = new Map(exact.map((r) => [r.id, r.raw]));
  // Prefix matches can only fill places whole words left: with the list full they would rank below it.
  if (exact.length < request.limit && terms.some((t) => t.length >= 3)) {
    const prefixed = terms.map((t) => (t.length >= 3 ? `${phrase(t)}*` : phrase(t)));
    for (const r of ranked(store, `${scope}(${prefixed.join(join)})`, keep, request.limit, true, selective))
      scores.set(r.id, (scores.get(r.id) ?? 0) + PREFIX_WEIGHT * r.raw);
  }
  // A description hit of an average query word in a description of average length scores 1.0;
  // more matched words score more, by the square root of their number.
  const reference = scored.reduce((sum, t) => sum + idf(store, t, frequency.get(t)!), 0) / Math.sqrt(scored.length);
  let items: Match[] = [...scores].map(([id, raw]) => ({ id, score: raw / reference, is_relevant: false }));
  items.sort((a, b) => b.score - a.score || b.id - a.id);
  items = items.slice(0, request.limit);

  if (similarityFields.every((f) => fields.includes(f))) {
    const query = queryVector(store, request.query, request.stop_languages[0]);
    for (const item of items.slice(0, SIMILARITY_DEPTH)) item.score += SIMILARITY_WEIGHT * similarity(store, item.id, query);
    items.sort((a, b) => b.score - a.score || b.id - a.id);
    // Too few matches of all the words: questions on the same topic that match some of them follow.
    if (request.operator === 'AND' && items.length < PAGE) {
      const found = new Set(items.map((i) => i.id));
      const allowed = new Set(ranked(store, scored.map(phrase).join(' OR '), keep, request.limit, newest, selective).map((r) => r.id));
      for (const s of similarTo(store, { text: request.query, language: request.stop_languages[0] }, PAGE))
        if (!found.has(s.id) && allowed.has(s.id) && s.score >= SIMILAR_ONLY_MIN)
          items.push({ id: s.id, score: SIMILARITY_WEIGHT * s.score, is_relevant: false });
    }
  }
  const relevant = items.filter((i) => i.score >= RELEVANT_SCORE).length;
  if (relevant >= PAGE) items = items.filter((i) => i.score >= WEAK_SCORE);
  for (const item of items) {
    item.score = Math.max(item.score, 1e-9);
    item.is_relevant = item.score >= RELEVANT_SCORE;
  }
  return { total: items.length, items };
}
