import type { estypes } from '@elastic/elasticsearch';
import { type SearchField, SearchFieldNames } from '@kn/contracts';
import { isRare, type QueryWords, queryStems, TYPO_PREFIX, typoEdits } from '../core/words.ts';
import { formWeights, type MatchFilter, WINDOW } from '../domain/match.ts';
import { bm25Idf } from '../domain/ranking.ts';
import { BM25 } from './mappings.ts';

type Query = estypes.QueryDslQueryContainer;

/**
 * Field boosts: Lucene applies a boost after the saturation (the local ranking weights the term
 * frequency before it), so these are the local weights' saturated values: a title hit scores about
 * 2 × idf, a description hit 1 ×, a comment or attachment hit about 0.3 ×. A word found in several
 * fields counts the best one plus TIE_BREAKER of the others.
 */
export const fieldBoosts: Record<SearchField, number> = {
  title: 2,
  description: 1,
  tags: 1.8,
  solutions: 0.6,
  comments: 0.3,
  attachments: 0.3,
};
const TIE_BREAKER = 0.3;

/** Published questions, not deleted unless asked, within the list filters. */
export function filterClauses(filter: MatchFilter): { filter: Query[]; must_not: Query[] } {
  const must: Query[] = [{ term: { is_published: true } }];
  const not: Query[] = [];
  if (!filter.include_deleted) must.push({ term: { is_deleted: false } });
  if (filter.languages?.length) must.push({ terms: { language: filter.languages } });
  if (filter.hidden_spaces?.length) not.push({ terms: { knowledge_space_id: filter.hidden_spaces } });
  if (filter.knowledge_space !== undefined) must.push({ term: { knowledge_space_id: filter.knowledge_space } });
  if (filter.categories?.length || filter.include_uncategorized) {
    const either: Query[] = [];
    if (filter.categories?.length) either.push({ terms: { category_id: filter.categories } });
    if (filter.include_uncategorized) either.push({ bool: { must_not: [{ exists: { field: 'category_id' } }] } });
    must.push({ bool: { should: either, minimum_should_match: 1 } });
  }
  const tags = [...new Set((filter.tags ?? []).map((t) => t.toLowerCase()))];
  if (tags.length)
    must.push(
      filter.tag_operator === 'OR' ? { terms: { tag_keys: tags } } : { bool: { filter: tags.map((t) => ({ term: { tag_keys: t } })) } },
    );
  return { filter: must, must_not: not };
}

/** The fields of a request in ranking order (all of them when none is valid). */
export const requestedFields = (fields: readonly SearchField[]) => {
  const valid = SearchFieldNames.filter((f) => fields.includes(f));
  return valid.length ? valid : [...SearchFieldNames];
};

/** A word's stems in the query's languages as terms of a field's stems. */
const stemTerms = (field: SearchField, term: string, languages: QueryWords['languages']): Query[] =>
  [...queryStems(term, languages)].map((s) => ({ term: { [`stems.${field}`]: s } }));

/** A word's typos in a field of words: the words `typoEdits` away with its first letter (constant score: a typo is not scored by its own frequency). */
const typoQuery = (field: string, term: string, boost?: number): Query => ({
  fuzzy: {
    [field]: {
      value: term,
      fuzziness: typoEdits(term),
      prefix_length: TYPO_PREFIX,
      transpositions: true,
      rewrite: 'constant_score',
      ...(boost ? { boost } : {}),
    },
  },
});

const either = (queries: Query[]): Query => ({ bool: { should: queries, minimum_should_match: 1 } });

/** Whether every searchable field is asked: then a word's counts read the combined fields (mappings.ts `all_words`, `all_stems`). */
export const allFields = (fields: readonly SearchField[]) => SearchFieldNames.every((f) => fields.includes(f));

/**
 * Which of a word's counts a frequencyQuery asks for: the word and its stem unless false (frequencies.ts
 * looks them up in the term dictionary when it can), its typos and prefixes when true.
 */
export interface CountedForms {
  whole?: boolean;
  stem?: boolean;
  typo: boolean;
  prefix: boolean;
}

/**
 * Counts, in one request, how many published questions hold each word, a word of its stem, a typo
 * of it (5+ letters) and a word it begins (3+ characters) in the fields: the idf of the ranking.
 * Over all six fields a count reads the combined field alone: one clause instead of six, and one
 * Levenshtein automaton a segment for a typo instead of six (a field holds a word's typo when the
 * combined field does).
 */
export function frequencyQuery(
  query: QueryWords,
  fields: readonly SearchField[],
  /** Which counts of a word to ask (the ranking reads typos only for rare words, prefixes for words in fewer than WINDOW questions). */
  forms: (term: string, i: number) => CountedForms = () => ({ typo: true, prefix: true }),
): estypes.SearchRequest {
  const combined = allFields(fields);
  const inWords = (clause: (field: string) => Query) => (combined ? clause('all_words') : either(fields.map((f) => clause(`words.${f}`))));
  const aggs: Record<string, estypes.AggregationsAggregationContainer> = {};
  query.terms.forEach((term, i) => {
    const counted = forms(term, i);
    if (counted.whole !== false) aggs[`w${i}`] = { filter: inWords((field) => ({ term: { [field]: term } })) };
    if (counted.stem !== false)
      aggs[`s${i}`] = {
        filter: combined
          ? { terms: { all_stems: [...queryStems(term, query.languages)] } }
          : either(fields.flatMap((f) => stemTerms(f, term, query.languages))),
      };
    if (counted.typo && typoEdits(term)) aggs[`t${i}`] = { filter: inWords((field) => typoQuery(field, term)) };
    if (counted.prefix && term.length >= 3) aggs[`p${i}`] = { filter: inWords((field) => ({ prefix: { [field]: term } })) };
  });
  return { size: 0, track_total_hits: true, query: { term: { is_published: true } }, aggs };
}

export interface TermStatistics {
  /** Published questions (deleted ones too, as the local index counts them). */
  documents: number;
  /** Per word: questions with the word, a word of its stem, a typo of it, a word it begins (each with the word itself). */
  frequencies: Array<{ whole: number; stem: number; typo: number; prefix: number }>;
  /** The engine's own idf of each word and stem in each field asked (`words.title hop` → idf): engineKey. */
  engine: ReadonlyMap<string, number>;
}

export const engineKey = (field: string, value: string) => `${field} ${value}`;

/** The fields and values whose engine idf a match reads: each word in `words.<field>`, each of its stems in `stems.<field>`. */
export function scoredTerms(query: QueryWords, fields: readonly SearchField[]) {
  return query.terms.map((term) =>
    fields.flatMap((f) => [
      { field: `words.${f}`, value: term },
      ...[...queryStems(term, query.languages)].map((s) => ({ field: `stems.${f}`, value: s })),
    ]),
  );
}

/** Lucene's BM25 idf from a term's document frequency in a field and the documents with the field. */
export const luceneIdf = (docCount: number, docFreq: number) => Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));

/**
 * A scored term query whose score is `weight` times BM25's saturation (with the (k1 + 1) of the
 * classic formula, which Lucene leaves out): the engine's idf in the field divided out, so that the
 * idf in `weight` (over whole questions, as the local ranking counts it) is the only one.
 */
function scoredTerm(field: string, value: string, weight: number, stats: TermStatistics): Query {
  const idf = stats.engine.get(engineKey(field, value));
  return { term: { [field]: { value, boost: idf && idf > 0 ? (weight * (BM25.k1 + 1)) / idf : weight } } };
}

/** Whether the ranking counts a word's typos: 5+ letters, rare or absent (words.ts isRare). */
export const countsTypos = (term: string, frequency: { whole: number }, documents: number) =>
  typoEdits(term) > 0 && isRare(frequency.whole, documents);

/**
 * Which of a word's forms beside the word itself a match asks for: a word of the same stem when
 * more questions hold one, typos of a rare word of 5+ letters, words it begins when it is in fewer
 * than WINDOW questions (each only when it adds questions).
 */
function matchedForms(term: string, frequency: TermStatistics['frequencies'][number], documents: number) {
  const { whole, stem, typo, prefix } = frequency;
  return {
    stem: stem > whole,
    typo: countsTypos(term, frequency, documents) && typo > whole,
    prefix: term.length >= 3 && whole < WINDOW && prefix > whole,
  };
}

/**
 * How many questions a matchQuery of these counts can find at most: per word the sum of the counts
 * of the forms it asks for (no fewer than their union); the words' sum for OR, the fewest for AND.
 */
export function matchesAtMost(request: { query: QueryWords; operator: 'AND' | 'OR' }, stats: TermStatistics) {
  const perTerm = request.query.terms.map((term, i) => {
    const frequency = stats.frequencies[i]!;
    const forms = matchedForms(term, frequency, stats.documents);
    return frequency.whole + (forms.stem ? frequency.stem : 0) + (forms.typo ? frequency.typo : 0) + (forms.prefix ? frequency.prefix : 0);
  });
  return request.operator === 'AND' ? Math.min(...perTerm) : perTerm.reduce((sum, n) => sum + n, 0);
}

/**
 * The full-text query of a match: per word the best field hit (dis_max) with the word's idf over
 * whole questions divided by the calibration reference as boost; a word of the same stem (the
 * `stems` fields) at formWeights.stem with the stem's idf; for a rare word of 5+ letters its typos
 * at formWeights.typo; for words of 3+ characters in fewer than WINDOW questions the words it begins
 * at formWeights.prefix (typos and prefixes constant-scored: Lucene does not score expansions).
 * OR: any word; AND: every word in some form. Scores come out calibrated (near 1.0 for a
 * description hit of an average word), as the local ranking's.
 */
export function matchQuery(
  request: { query: QueryWords; operator: 'AND' | 'OR'; fields: readonly SearchField[]; filter: MatchFilter },
  stats: TermStatistics,
  /** The best this many, with their units (the blend reads them); and how many score at least `countAtLeast` (results.ts countedAtLeast). */
  window: { size: number; countAtLeast?: number } = { size: WINDOW },
): estypes.SearchRequest | null {
  const { query, fields } = request;
  const { terms } = query;
  if (!terms.length) return null;
  const idfs = stats.frequencies.map((f) => bm25Idf(stats.documents, f.whole));
  const reference = idfs.reduce((sum, idf) => sum + idf, 0) / Math.sqrt(terms.length);
  const perTerm: Query[] = terms.map((term, i) => {
    const { whole, stem, typo, prefix } = stats.frequencies[i]!;
    const forms = matchedForms(term, stats.frequencies[i]!, stats.documents);
    const alternatives: Query[] = whole
      ? fields.map((f) => scoredTerm(`words.${f}`, term, (fieldBoosts[f] * idfs[i]!) / reference, stats))
      : [];
    if (forms.stem) {
      const stemIdf = bm25Idf(stats.documents, stem);
      for (const f of fields)
        for (const s of queryStems(term, query.languages))
          alternatives.push(scoredTerm(`stems.${f}`, s, (formWeights.stem * fieldBoosts[f] * stemIdf) / reference, stats));
    }
    if (forms.typo) {
      const typoIdf = bm25Idf(stats.documents, typo);
      for (const f of fields) alternatives.push(typoQuery(`words.${f}`, term, (formWeights.typo * fieldBoosts[f] * typoIdf) / reference));
    }
    if (forms.prefix) {
      const prefixIdf = bm25Idf(stats.documents, prefix);
      for (const f of fields)
        alternatives.push({
          prefix: { [`words.${f}`]: { value: term, boost: (formWeights.prefix * fieldBoosts[f] * prefixIdf) / reference } },
        });
    }
    return alternatives.length ? { dis_max: { queries: alternatives, tie_breaker: TIE_BREAKER } } : { match_none: {} };
  });
  const { filter, must_not } = filterClauses(request.filter);
  const text: Query = request.operator === 'AND' ? { bool: { must: perTerm } } : { bool: { should: perTerm, minimum_should_match: 1 } };
  return {
    size: window.size,
    // The ids come from the sort values: loading each hit's stored _id took 0.2 ms a hit (a quarter
    // of a second for the window at 20,000 questions), the query itself a tenth of that.
    _source: false,
    stored_fields: '_none_',
    docvalue_fields: ['unit_packed'],
    // How many match, up to the window: `total` (the local ranking counts the same, local/match.ts).
    track_total_hits: WINDOW,
    query: { bool: { must: [text], filter, must_not } },
    sort: [{ _score: { order: 'desc' } }, { id: { order: 'desc' } }],
    // A score in a filter: function_score's min_score scores the text query there too.
    ...(window.countAtLeast === undefined
      ? {}
      : { aggs: { at_least: { filter: { function_score: { query: text, min_score: window.countAtLeast } } } } }),
  };
}

/** The clause that leaves out the questions of the `hidden` knowledge spaces (a caller's closed ones), for a `must_not`. */
export const inSpaces = (hidden: readonly number[]): Query[] => (hidden.length ? [{ terms: { knowledge_space_id: [...hidden] } }] : []);

/**
 * Candidates for similar questions: live questions sharing the vector's most informative words;
 * none of the `hidden` knowledge spaces. Each hit carries its unit and its neighbour facts.
 */
export function similarCandidatesQuery(
  words: ReadonlyArray<{ word: string; weight: number }>,
  exclude: number | undefined,
  size: number,
  hidden: readonly number[] = [],
) {
  return {
    size,
    // What a candidate is, from binary doc values (backend.ts similarDocuments): no stored source
    // read, nor parsed (OpenSearch filters a source by parsing all of it).
    _source: false,
    stored_fields: '_none_',
    docvalue_fields: ['unit_packed', 'neighbour_packed'],
    query: {
      bool: {
        should: words.map(({ word, weight }) => ({ term: { unit_terms: { value: word, boost: weight } } })),
        minimum_should_match: 1,
        filter: [{ term: { live: true } }],
        must_not: [...(exclude === undefined ? [] : [{ term: { id: exclude } }]), ...inSpaces(hidden)],
      },
    },
  } satisfies estypes.SearchRequest;
}

/**
 * Of these tags (lower-case labels), how many questions carry each (drafts and deleted ones too,
 * as the content service counts a tag's uses), and how many of them are outside the `hidden`
 * spaces: a tag used only there does not exist for the caller (results.ts tagsOnlyIn).
 */
export function tagUsesQuery(keys: readonly string[], hidden: readonly number[]): estypes.SearchRequest {
  return {
    size: 0,
    query: { terms: { tag_keys: [...keys] } },
    aggs: {
      tags: {
        terms: { field: 'tag_keys', include: [...keys], size: Math.max(1, keys.length) },
        aggs: { outside: { filter: { bool: { must_not: inSpaces(hidden) } } } },
      },
    },
  };
}

/**
 * How many published questions hold each word in a keyword field (unit_terms: similar questions;
 * asked_terms: expert search). Only the questions with one of the words are collected: the terms
 * aggregation reads every word of each question it collects.
 */
export function documentFrequencyQuery(field: string, words: readonly string[]): estypes.SearchRequest {
  return {
    size: 0,
    track_total_hits: false,
    query: { bool: { filter: [{ term: { is_published: true } }, { terms: { [field]: [...words] } }] } },
    aggs: { df: { terms: { field, include: [...words], size: Math.max(1, words.length) } } },
  };
}

/** Counts the published questions (deleted ones too: the N of the idfs). */
export const publishedQuery = (): estypes.SearchRequest => ({ size: 0, track_total_hits: true, query: { term: { is_published: true } } });

/** Titles of visible questions with every word, the last as a prefix, best title match first. */
export function autocompleteQuery(terms: readonly string[], closedSpaces: readonly number[], size: number): estypes.SearchRequest {
  const last = terms[terms.length - 1]!;
  return {
    size,
    track_total_hits: 1000,
    _source: ['title'],
    query: {
      bool: {
        must: [...terms.slice(0, -1).map((t) => ({ term: { 'words.title': t } })), { prefix: { 'words.title': last } }],
        filter: [{ term: { live: true } }],
        must_not: closedSpaces.length ? [{ terms: { knowledge_space_id: [...closedSpaces] } }] : [],
      },
    },
    sort: [{ _score: { order: 'desc' } }, { id: { order: 'desc' } }],
  };
}
