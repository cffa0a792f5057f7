import type { estypes } from '@elastic/elasticsearch';
import type { RoutedQuestion } from '@kn/contracts';
import { liftScores, type Match, PAGE, pageOf, RELEVANT_SCORE, similarityBlend, similarOnly, WEAK_SCORE, WINDOW } from '../domain/match.ts';
import { type Meaning, meaningLifts, semanticWeights } from '../domain/semantic.ts';
import type { QuestionDocument } from './documents.ts';
import type { TermStatistics } from './queries.ts';

const count = (total: estypes.SearchTotalHits | number | undefined) => (typeof total === 'number' ? total : (total?.value ?? 0));

/**
 * The idf inputs of a match from the answer of frequencyQuery; a word's or stem's count it did not
 * ask for is `known`'s (counted before, or looked up in the term dictionary), any other the word's.
 */
export function termStatistics(
  response: estypes.SearchResponse,
  terms: readonly string[],
  known: ReadonlyArray<{ whole: number; stem?: number }> = [],
): TermStatistics {
  const aggs = (response.aggregations ?? {}) as Record<string, estypes.AggregationsFilterAggregate>;
  return {
    documents: count(response.hits.total),
    frequencies: terms.map((_, i) => {
      const whole = aggs[`w${i}`]?.doc_count ?? known[i]?.whole ?? 0;
      const count = (key: string, otherwise = whole) => aggs[`${key}${i}`]?.doc_count ?? otherwise;
      return { whole, stem: count('s', known[i]?.stem ?? whole), typo: count('t'), prefix: count('p') };
    }),
    engine: new Map(),
  };
}

/** Each word's document frequency from the answer of documentFrequencyQuery. */
export function documentFrequencies(response: estypes.SearchResponse): Map<string, number> {
  const buckets = (response.aggregations?.df as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
  const list = Array.isArray(buckets) ? buckets : [];
  return new Map(list.map((b) => [String(b.key), b.doc_count]));
}

/** The tags of a tagUsesQuery answer that questions carry, all of them in the hidden spaces. */
export function tagsOnlyIn(response: estypes.SearchResponse): Set<string> {
  const buckets = (response.aggregations?.tags as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
  const list = (Array.isArray(buckets) ? buckets : []) as Array<
    estypes.AggregationsStringTermsBucket & { outside?: { doc_count: number } }
  >;
  return new Set(list.filter((b) => b.doc_count > 0 && (b.outside?.doc_count ?? 0) === 0).map((b) => String(b.key)));
}

/**
 * The hits of a search with their score (ES answers null scores when sorting by a field only); the
 * id from the hit, or from the sort by score and id when the search loads no stored fields (matchQuery).
 */
export const scoredHits = (response: estypes.SearchResponse): Array<{ id: number; score: number }> =>
  response.hits.hits.map((h) => ({ id: Number(h._id ?? h.sort?.[1]), score: h._score ?? 0 }));

/** How many hits a search counted (its track_total_hits at most). */
export const countedHits = (response: estypes.SearchResponse) => count(response.hits.total);

/** The matches that scored at least a match query's `countAtLeast` (queries.ts matchQuery). */
export const countedAtLeast = (response: estypes.SearchResponse) =>
  (response.aggregations?.at_least as estypes.AggregationsFilterAggregate | undefined)?.doc_count ?? 0;

/**
 * The match's window as the local ranking answers it: the best WINDOW hits, the similarity blend's
 * depth best lifted by their cosines with the query, of units and of topics, and their meaning
 * (liftScores), weak ones left out when a page of them is relevant (before the blend), the
 * similar-only questions after the text matches, and the page asked for.
 */
export function rankMatches(
  hits: ReadonlyArray<{ id: number; score: number }>,
  options: {
    similarity?: ReadonlyMap<number, number>;
    /** The topic cosines of the same best matches (topics.ts). */
    topics?: ReadonlyMap<number, number>;
    /** The query's meaning (domain/semantic.ts), lifting the same best matches. */
    meaning?: Meaning;
    similarOnly?: ReadonlyArray<{ id: number; score: number }>;
    offset: number;
    limit: number;
    /** Counted by the engine when `hits` are only the best of the window (textMatches); else counted here. */
    counted?: { total: number; leaveOutWeak: boolean };
  },
): { total: number; items: Match[] } {
  const window = hits.slice(0, WINDOW);
  const leaveOutWeak = options.counted?.leaveOutWeak ?? window.filter((h) => h.score >= RELEVANT_SCORE).length >= PAGE;
  let total = options.counted?.total ?? (leaveOutWeak ? window.filter((h) => h.score >= WEAK_SCORE).length : window.length);
  // As the local ranking: weak matches left out before the blend when a page is relevant.
  const ranked = leaveOutWeak ? window.filter((h) => h.score >= WEAK_SCORE) : window;
  const items: Match[] = ranked.map((h) => ({ id: h.id, score: h.score, is_relevant: false }));
  // The local blend: the cosines of the depth best, of their units and topics, and their meaning.
  const { similarity, topics, meaning } = options;
  if (similarity) {
    const best = items.slice(0, similarityBlend.depth);
    const meant = meaningLifts(
      best.map((i) => i.id),
      meaning,
      semanticWeights.lift,
    );
    liftScores(
      items,
      best.map(
        (i, k) => similarityBlend.weight * (similarity.get(i.id) ?? 0) + similarityBlend.topics * (topics?.get(i.id) ?? 0) + meant[k]!,
      ),
    );
  } else liftScores(items, []);
  for (const s of options.similarOnly ?? []) {
    items.push(similarOnly(s.id, s.score));
    total++;
  }
  return pageOf(items, { total, leaveOutWeak, offset: options.offset, limit: options.limit });
}

/** A question document as routing needs it (undefined for stubs). */
export const routedQuestion = (doc: QuestionDocument | undefined): RoutedQuestion | undefined =>
  doc && !doc.stub
    ? {
        id: doc.id,
        title: doc.title,
        text: doc.description,
        tags: doc.tags,
        language: doc.language,
        author_id: doc.author_id,
        knowledge_space_id: doc.knowledge_space_id,
      }
    : undefined;
