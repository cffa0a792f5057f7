import { SearchFieldNames } from '@kn/contracts';
import { isRare, queryWords, typoEdits } from '../core/words.ts';
import { fieldWeights } from '../domain/fields.ts';
import {
  blendsSimilarity,
  type FormWeights,
  formWeights,
  liftScores,
  type Match,
  type MatchFilter,
  type MatchRequest,
  PAGE,
  pageOf,
  RELEVANT_SCORE,
  SIMILAR_ONLY_MIN,
  type SimilarityBlend,
  similarityBlend,
  similarOnly,
  WEAK_SCORE,
  WINDOW,
} from '../domain/match.ts';
import { bm25Idf } from '../domain/ranking.ts';
import { MEANING_ONLY_MIN, type Meaning, meaningLifts, type SemanticWeights, semanticWeights } from '../domain/semantic.ts';
import { type Feedback, relevanceFeedback } from '../domain/similarity.ts';
import {
  Accumulator,
  type FieldWeights,
  type PhraseScale,
  type ScoredWord,
  type TermIndex,
  fieldWeights as weightsOf,
} from './postings.ts';
import { phraseIdf, topSlots } from './ranking.ts';
import { cosines, similarTo, textVector, withFeedback } from './similarity.ts';
import type { SearchStore } from './store.ts';

/**
 * How question search ranks on the local index. The parameters are the rules' (domain/match.ts,
 * domain/similarity.ts) unless a benchmark passes others; `atATimeWords` (AT_A_TIME_WORDS) 0 scores
 * every posting, which tests compare the question-at-a-time ranking with.
 */
export interface MatchOptions {
  forms?: Readonly<FormWeights>;
  blend?: Readonly<SimilarityBlend>;
  feedback?: Readonly<Feedback>;
  atATimeWords?: number;
  /** The query's meaning (its embedding's cosine with questions): none without a model. */
  meaning?: Meaning;
  semantic?: Readonly<SemanticWeights>;
}

/**
 * The filters beyond "not deleted" as a test of an indexed question's slot, or null when there are
 * none (the common case: the ranking loop then tests nothing else).
 */
function facetFilter(index: TermIndex, filter: MatchFilter): ((slot: number) => boolean) | null {
  let languages: Uint8Array | null = null;
  if (filter.languages?.length) {
    languages = new Uint8Array(256);
    for (const l of filter.languages) {
      const code = index.codeOfLanguage(l);
      if (code) languages[code] = 1;
    }
  }
  const categories = filter.categories?.length ? new Set(filter.categories) : null;
  const hidden = filter.hidden_spaces?.length ? new Set(filter.hidden_spaces) : null;
  const labels = [...new Set((filter.tags ?? []).map((t) => t.toLowerCase()))];
  const tagTest = (tags: readonly string[]) => {
    const own = new Set(tags.map((t) => t.toLowerCase()));
    return filter.tag_operator === 'OR' ? labels.some((l) => own.has(l)) : labels.every((l) => own.has(l));
  };
  const { knowledge_space, include_uncategorized } = filter;
  if (!languages && !categories && !hidden && !labels.length && knowledge_space === undefined && !include_uncategorized) return null;
  return (slot) => {
    if (languages && !languages[index.languageOf(slot)]) return false;
    const space = index.spaceOf(slot);
    if (hidden?.has(space)) return false;
    if (knowledge_space !== undefined && space !== knowledge_space) return false;
    if (categories || include_uncategorized) {
      const category = index.categoryOf(slot);
      if (!(categories?.has(category) || (include_uncategorized && category === 0))) return false;
    }
    return !labels.length || tagTest(index.tagsOf(slot));
  };
}

const matches = new Accumulator();

/** A query word as the ranking reads it: its id (-1: unknown), document frequency and idf, and its other forms in the index. */
export interface RankedWord {
  term: string;
  id: number;
  frequency: number;
  idf: number;
  /** Other words of the same stem, words a typo away (for a rare word), words it begins, without each other. */
  forms: Array<{ kind: 'stem' | 'typo' | 'prefix'; ids: number[] }>;
}

/**
 * The query's words with their other forms in the index: for a word in fewer than WINDOW questions,
 * the words of the same stem in the query's languages and, from 3 characters on, the words it
 * begins; for a word of 5+ letters that is rare or absent, the more frequent words one edit away
 * (9+ letters: two).
 */
export function rankedWords(index: TermIndex, query: ReturnType<typeof queryWords>, weights: FieldWeights | null): RankedWord[] {
  return query.terms.map((term) => {
    const id = index.termId(term);
    const frequency = id < 0 ? 0 : weights ? index.countMatches(id, weights) : index.documentFrequency(id);
    const seen = new Set([id]);
    const fresh = (ids: number[]) => ids.filter((w) => !seen.has(w) && seen.add(w));
    // A word in WINDOW questions or more fills the window on its own: its other forms would rank below it.
    const forms: RankedWord['forms'] = [];
    if (frequency < WINDOW)
      forms.push({ kind: 'stem', ids: fresh([...new Set(query.languages.flatMap((l) => index.stemVariants(term, l)))]) });
    const edits = typoEdits(term);
    if (edits && isRare(index.documentFrequency(id), index.count))
      forms.push({ kind: 'typo', ids: fresh(index.neighbours(term, edits).filter((w) => index.documentFrequency(w) > frequency)) });
    if (term.length >= 3 && frequency < WINDOW) forms.push({ kind: 'prefix', ids: fresh(index.expand(term)) });
    return { term, id, frequency, idf: bm25Idf(index.count, frequency), forms: forms.filter((f) => f.ids.length) };
  });
}

/**
 * A query word with its other forms, scored: the questions that have the word in the weighted
 * fields get its BM25, divided by `reference`; questions without it but with another form of it
 * get that form (one phrase of all its words, as FTS5 scores `"hop"*`) at its weight: the first
 * of the word's forms, in their order, that the question has. In slot order, for both rankings.
 */
function scoredWord(
  index: TermIndex,
  { id, frequency, idf, forms }: RankedWord,
  weights: FieldWeights,
  reference: number,
  kindWeights: Readonly<FormWeights>,
): ScoredWord {
  const formPhrases = forms.map((form) => form.ids);
  // Each form's idf counts the questions of the word and of the forms before it too.
  const counts = index.phraseCounts(formPhrases, weights);
  let counted = frequency;
  const scales: PhraseScale[] = forms.map((form, f) => {
    counted += counts[f]!;
    return { idf: phraseIdf(index, counted), weight: kindWeights[form.kind] / reference };
  });
  // The word itself first, when the index has it.
  const whole = frequency > 0;
  return index.scoredWord(
    [...(whole ? [[id]] : []), ...formPhrases],
    weights,
    [...(whole ? [{ idf: idf / reference, weight: null }] : []), ...scales],
    counted,
  );
}

/**
 * Up to this many words a query is ranked question at a time; with more, finding each next
 * candidate among the lists costs more than scoring every posting (bench/text-ranking.ts).
 */
const AT_A_TIME_WORDS = 8;

/** A query's words as the text ranking reads them (scores divided by `reference`), and the `k` best it keeps. */
interface TextQuery {
  index: TermIndex;
  words: RankedWord[];
  weights: FieldWeights;
  reference: number;
  forms: Readonly<FormWeights>;
  and: boolean;
  /** Whether the filters let a slot in. */
  accept: (slot: number) => boolean;
  k: number;
}

interface TextRanking {
  /** Matches that pass the filters, and of them those at or above WEAK_SCORE (each exact up to WINDOW). */
  found: number;
  aboveWeak: number;
  /** Matches at or above RELEVANT_SCORE (exact up to PAGE). */
  relevant: number;
  /** The best `k` matches, best first. */
  best: Array<{ slot: number; score: number }>;
}

/**
 * The text ranking question at a time (TermIndex.bestOfWords): whole words from their postings,
 * a word with other forms (a rare word) scored beforehand with them. The floor a question must
 * reach to be looked at stays at nothing until WINDOW matches are counted, then at WEAK_SCORE
 * until WINDOW of them reach it, and is the k-th best score from then on: the counts are those of
 * scoring every posting, up to where `total` stops counting.
 */
function bestAtATime({ index, words, weights, reference, forms, and, accept, k }: TextQuery): TextRanking {
  const heap = index.slotHeap(k);
  let found = 0;
  let aboveWeak = 0;
  index.bestOfWords(
    words.map((w) => ({
      id: w.frequency > 0 ? w.id : -1,
      idf: w.idf / reference,
      scored: w.forms.length ? scoredWord(index, w, weights, reference, forms) : undefined,
    })),
    weights,
    and,
    (slot, score) => {
      if (accept(slot)) {
        found++;
        if (score >= WEAK_SCORE) aboveWeak++;
        if (heap.admits(score, slot)) heap.push(score, slot);
      }
      const counting = found < WINDOW ? Number.NEGATIVE_INFINITY : aboveWeak < WINDOW ? WEAK_SCORE : Number.POSITIVE_INFINITY;
      return Math.min(heap.floor, counting);
    },
  );
  const best = heap.sorted();
  const relevant = best.filter((b) => b.score >= RELEVANT_SCORE).length;
  return { found: Math.min(found, WINDOW), aboveWeak: Math.min(aboveWeak, WINDOW), relevant, best };
}

/** The text ranking over every posting of the words and their forms, into the accumulators: the best `k`. */
function bestOfAllPostings({ index, words, weights, reference, forms, and, accept, k }: TextQuery): TextRanking {
  matches.reset(index.slotCount);
  words.forEach((word, i) => {
    const bit = (1 << i) >>> 0;
    if (!word.forms.length) {
      if (word.frequency > 0) index.scoreTerm(word.id, word.idf / reference, weights, bit, matches);
      return;
    }
    const scored = scoredWord(index, word, weights, reference, forms);
    scored.fill(Number.POSITIVE_INFINITY);
    const { slots, adds, whole } = scored;
    for (let e = 0; e < scored.size; e++) {
      const slot = slots[e]!;
      matches.touch(slot);
      if (whole[e]) {
        matches.score[slot]! += adds[e]!;
        matches.exact[slot]! |= bit;
      } else matches.extra[slot]! += adds[e]!;
      matches.any[slot]! |= bit;
    }
  });
  const every = words.length === 32 ? 0xffffffff : ((1 << words.length) >>> 0) - 1;
  // The final score of each match (negative: left out). AND: every word, whole or in another form; the
  // whole-word score counts only when every word is whole.
  let found = 0;
  let aboveWeak = 0;
  let relevant = 0;
  const { score, extra, exact, any, touched } = matches;
  for (let i = 0; i < matches.size; i++) {
    const slot = touched[i]!;
    let s: number;
    if (!and) s = score[slot]! + extra[slot]!;
    else if (any[slot] !== every) s = -1;
    else s = (exact[slot] === every ? score[slot]! : 0) + extra[slot]!;
    if (s >= 0 && !accept(slot)) s = -1;
    score[slot] = s;
    if (s < 0) continue;
    found++;
    if (s >= WEAK_SCORE) aboveWeak++;
    if (s >= RELEVANT_SCORE) relevant++;
  }
  return { found, aboveWeak, relevant, best: topSlots(index, matches, k, () => true) };
}

/**
 * Full-text search over the index: BM25 over the weighted fields, whole words first, then words of
 * the same stem, typos of rare words, and prefixes of 3+ characters much lower, calibrated so that one query's scores centre near 1.0, blended with
 * the similarity of the best matches at a low weight. Ranks the best WINDOW matches and returns
 * `total` (how many there are) and the page `offset`, `limit` of them.
 */
export function matchQuestions(
  store: SearchStore,
  request: MatchRequest,
  options: MatchOptions = {},
): { total: number; items: Match[]; words: RankedWord[] } {
  const {
    forms = formWeights,
    blend = similarityBlend,
    feedback = relevanceFeedback,
    atATimeWords = AT_A_TIME_WORDS,
    meaning,
    semantic = semanticWeights,
  } = options;
  const { index } = store;
  const query = queryWords(request.query, request.stop_languages);
  const terms = query.terms;
  const fields = SearchFieldNames.filter((f) => request.fields.includes(f));
  if (!terms.length || !fields.length) return { total: 0, items: [], words: [] };
  const restricted = fields.length < SearchFieldNames.length;
  const weights = weightsOf(Object.fromEntries(fields.map((f) => [f, fieldWeights[f]])));
  const words = rankedWords(index, query, restricted ? weights : null);
  // A description hit of an average query word in a description of average length scores 1.0;
  // more matched words score more, by the square root of their number.
  const reference = words.reduce((sum, w) => sum + w.idf, 0) / Math.sqrt(words.length);
  const and = request.operator === 'AND';
  const keep = facetFilter(index, request.filter);
  const deleted = request.filter.include_deleted ? null : index.deleted;
  const accept = (slot: number) => !deleted?.[slot] && (!keep || keep(slot));
  // The best as many as the page and the blend read.
  const k = Math.min(WINDOW, Math.max(request.offset + request.limit, blend.depth));
  const text: TextQuery = { index, words, weights, reference, forms, and, accept, k };
  const { found, aboveWeak, relevant, best: ranked } = words.length <= atATimeWords ? bestAtATime(text) : bestOfAllPostings(text);
  // Weak matches are left out when a page of matches is relevant.
  const leaveOutWeak = relevant >= PAGE;
  let total = Math.min(WINDOW, leaveOutWeak ? aboveWeak : found);
  // The blend only reorders the best few: below them the text order holds.
  const best = ranked.slice(0, Math.min(total, k));
  const items: Match[] = best.map((b) => ({ id: index.questionId(b.slot), score: b.score, is_relevant: false }));

  if (blendsSimilarity(fields)) {
    const blended = best.slice(0, blend.depth);
    const blendedSlots = blended.map((b) => b.slot);
    const asked = textVector(index, request.query, query.languages[0]);
    // The query's words, and the words of its best text matches (pseudo-relevance feedback).
    const similar = index.withWordsOf(blendedSlots, () => cosines(index, blendedSlots, withFeedback(index, asked, blendedSlots, feedback)));
    // The query's topic (topics.ts): questions that say the same in other words.
    const { topics } = store;
    const topic = topics && blend.topics > 0 ? topics.vectorOf(asked.ids, asked.weights) : null;
    const meant = meaningLifts(
      blended.map((b) => index.questionId(b.slot)),
      meaning,
      semantic.lift,
    );
    liftScores(
      items,
      blended.map((b, i) => blend.weight * similar[i]! + (topic ? blend.topics * topics!.cosine(topic, b.slot) : 0) + meant[i]!),
    );
    // Too few matches of all the words: questions on the same topic that match some of them follow.
    if (and && found < PAGE) {
      const ids = new Set(items.map((i) => i.id));
      const some = new Set(terms.map((t) => index.termId(t)).filter((id) => id >= 0));
      const similarOptions = { thorough: true, feedback, meaning, semantic };
      for (const s of similarTo(store, { text: request.query, language: query.languages[0] }, PAGE, similarOptions)) {
        const slot = index.slotOf(s.id);
        const visible = !deleted?.[slot] && (!keep || keep(slot));
        if (!ids.has(s.id) && s.score >= SIMILAR_ONLY_MIN && visible && index.hasAnyTerm(slot, some, weights)) {
          items.push(similarOnly(s.id, s.score));
          total++;
        }
      }
    }
  }
  // Fewer text matches than a page: questions that say the same in other words follow them.
  if (meaning && found < PAGE) {
    const listed = new Set(items.map((i) => i.id));
    const accept = (id: number) => {
      const slot = index.slotOf(id);
      return !listed.has(id) && index.holds(slot) && !deleted?.[slot] && (!keep || keep(slot));
    };
    for (const near of meaning.nearest(PAGE, accept))
      if (near.score >= MEANING_ONLY_MIN) {
        items.push(similarOnly(near.id, near.score));
        total++;
      }
  }
  // The words with their forms go along: highlighting marks the same forms.
  return { ...pageOf(items, { total, leaveOutWeak, offset: request.offset, limit: request.limit }), words };
}
