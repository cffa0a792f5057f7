import { type SearchField, SearchFieldNames } from '@kn/contracts';
import {
  languages as analyzed,
  detectLanguage,
  foldDiacritics,
  type Language,
  stem,
  stopWords,
  termCounts,
  tokenize,
} from '@kn/similarity';

/**
 * The word rules of search, for both backends (the local index in `local/`, Elasticsearch in
 * `elasticsearch/`): what the words of a question are, what the words of a query are, and how a
 * query word matches a word of a text (whole, by its stem, by a typo, by a prefix). Analyzers
 * (stop words and Snowball stemmers of en, de, fr, es, it, pt, language detection) come from
 * `@kn/similarity`. Every function here takes any Unicode text and never throws.
 */

/** Terms of one query beyond this are ignored: a pasted page is not a better query than its first sentence. */
export const MAX_TERMS = 32;

const isAnalyzed = (l: string | undefined): l is Language => (analyzed as readonly string[]).includes(l ?? '');

/** The analyzer of a language: its own for en, de, fr, es, it, pt; English stop words and no stems for others. */
export const analyzerOf = (language: string | undefined): Language => (isAnalyzed(language) ? language : 'en');

/** The language whose stems a question's words have, or null (a language without a stemmer). */
export const stemLanguageOf = (language: string | undefined): Language | null => (isAnalyzed(language) ? language : null);

/** The words of a text as the index holds them: stop words of its language removed, lower case, diacritics folded, not stemmed. */
export function indexWords(text: string, language: string): string[] {
  return tokenize(text, { language: analyzerOf(language), stem: false, fold: true });
}

/** A text's words with their counts, as similar-question search weighs them (the index's words). */
export function textCounts(text: string, language?: string): Map<string, number> {
  return termCounts(text, { language: analyzerOf(language), stem: false, fold: true });
}

/** The stem of an index word in a question language (the word itself for a language without a stemmer). */
export function wordStem(word: string, language: string): string {
  const l = stemLanguageOf(language);
  return l ? stem(word, l) : word;
}

export type PartKind = 'solution' | 'comment' | 'attachment';

/** The search field that holds each kind of part. */
export const partField = { solution: 'solutions', comment: 'comments', attachment: 'attachments' } as const satisfies Record<
  PartKind,
  SearchField
>;
/** The part kind a search field holds, for the fields that hold parts. */
export const fieldPart = Object.fromEntries(Object.entries(partField).map(([kind, field]) => [field, kind])) as Partial<
  Record<SearchField, PartKind>
>;

const fieldOf = (kind: PartKind) => SearchFieldNames.indexOf(partField[kind]);
const noCounts = SearchFieldNames.map(() => 0);

/** A question's words with their frequency in each field (per-field counts in SearchFieldNames order), and its length in words. */
export function questionWords(
  q: { title: string; description: string; tags: readonly string[]; language: string },
  parts: ReadonlyArray<{ kind: PartKind; text: string }>,
): { counts: Map<string, number[]>; length: number } {
  const texts: string[][] = SearchFieldNames.map(() => []);
  texts[SearchFieldNames.indexOf('title')]!.push(q.title);
  texts[SearchFieldNames.indexOf('description')]!.push(q.description);
  texts[SearchFieldNames.indexOf('tags')]!.push(q.tags.join(' '));
  for (const part of parts) texts[fieldOf(part.kind)]!.push(part.text);
  const counts = new Map<string, number[]>();
  let length = 0;
  texts.forEach((list, field) => {
    for (const text of list)
      for (const word of indexWords(text, q.language)) {
        let c = counts.get(word);
        if (!c) {
          c = noCounts.slice();
          counts.set(word, c);
        }
        c[field]!++;
        length++;
      }
  });
  return { counts, length };
}

/** The words of a tag label or a text for matching labels: lower case, diacritics folded, split at anything but letters and digits. */
export const labelWords = (text: string) =>
  foldDiacritics(text.toLowerCase())
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** A query as both backends match it. */
export interface QueryWords {
  /** Its words as the index holds them (stop words left out, folded), each once, in query order, at most MAX_TERMS. */
  terms: string[];
  /** Languages whose stems the words also match in: the caller's and the one detected in the query. */
  languages: Language[];
}

/**
 * The words of a query: the stop words of the caller's languages (`language_id`, else the user's
 * content languages, else English) and of the language the query is detected in are left out;
 * stems are looked up in those languages too.
 */
export function queryWords(text: string, callerLanguages: readonly string[]): QueryWords {
  const key = `${callerLanguages.join(',')}\n${text}`;
  if (last?.key !== key) last = { key, words: analyseQuery(text, callerLanguages) };
  return last.words;
}

/** The last query analysed: ranking, highlighting and the similarity blend of one request ask for it in turn. */
let last: { key: string; words: QueryWords } | null = null;

function analyseQuery(text: string, callerLanguages: readonly string[]): QueryWords {
  const own = callerLanguages.filter(isAnalyzed);
  const detected = detectLanguage(text, '');
  const languages = [...new Set<Language>([...(isAnalyzed(detected) ? [detected] : []), ...(own.length ? own : ['en' as const])])];
  const [first, ...others] = languages;
  const terms = new Set<string>();
  // A compound of the query also asks for its parts written together: `over-carbonated` finds
  // `overcarbonation` (by its stem), `e-mail` finds `email`. Questions are indexed without them: a
  // question with the query's own compound then counted its words twice (docs/search.md, "Words").
  for (const word of tokenize(text, { language: first, stem: false, compounds: true })) {
    if (others.some((l) => stopWords[l].has(word))) continue;
    terms.add(foldDiacritics(word));
    if (terms.size >= MAX_TERMS) break;
  }
  return { terms: [...terms], languages };
}

/** The query's words only (queryWords). */
export const queryTerms = (text: string, callerLanguages: readonly string[]) => queryWords(text, callerLanguages).terms;

/** The stems of a query word in the query's languages. */
export const queryStems = (term: string, languages: readonly Language[]) => new Set(languages.map((l) => stem(term, l)));

/**
 * Typo tolerance: how many edits (insertions, deletions, substitutions, transpositions of two
 * neighbours) a query word may be from a word it matches: one from five letters on, two from nine;
 * the first letter stays (TYPO_PREFIX).
 * Shorter words have too many neighbours that mean something else (`beer`, `bear`, `deer`).
 */
export function typoEdits(term: string): 0 | 1 | 2 {
  const letters = term.match(/\p{L}/gu)?.length ?? 0;
  return letters >= 9 ? 2 : letters >= 5 ? 1 : 0;
}

/**
 * A typo keeps the first letter: people rarely mistype it, and a lookup that starts from it reads
 * a twentieth of the dictionary (Lucene's fuzzy queries call it the prefix length).
 */
export const TYPO_PREFIX = 1;

/** Whether a word is a typo of a query word (typoEdits of it, the first letter kept). */
export const isTypo = (term: string, word: string) =>
  typoEdits(term) > 0 && word.startsWith(term.slice(0, TYPO_PREFIX)) && editDistance(term, word, typoEdits(term)) <= typoEdits(term);

/**
 * A query word is rare when at most this share of the questions have it (or at most 2): then it
 * is likely a typo, and its neighbours are looked up. Any other word costs nothing more.
 */
export const RARE_SHARE = 0.0001;
export const isRare = (frequency: number, documents: number) => frequency <= Math.max(2, RARE_SHARE * documents);

/**
 * The edit distance of two words (optimal string alignment: a transposition of neighbours is one
 * edit) when it is at most `max`, else max + 1; stops as soon as every alignment is over it.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1))
        d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < least) least = d;
    }
    if (least > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** How a word of a text matches a query word, best first; the ranking weighs them in this order too. */
export type MatchKind = 'exact' | 'stem' | 'typo' | 'prefix';

/**
 * Which query word a word of a text matches, and how: whole, by its stem in one of the query's
 * languages, by a typo (only for the query words the index found rare: `typoTerms`), or as a
 * prefix of 3+ characters. Highlighting marks exactly what the ranking counted. An index that
 * knows the words of each form (`forms`: word → match) saves stemming every word of the texts.
 */
export function wordMatcher(
  query: QueryWords,
  typoTerms: ReadonlySet<string> = new Set(),
  forms?: ReadonlyMap<string, { term: string; kind: MatchKind }>,
) {
  const stems = query.terms.map((t) => queryStems(t, query.languages));
  return (word: string): { term: string; kind: MatchKind } | null => {
    const folded = foldDiacritics(word.toLowerCase());
    const exact = query.terms.find((t) => t === folded);
    if (exact) return { term: exact, kind: 'exact' };
    if (forms) {
      const form = forms.get(folded);
      if (form) return form;
      const prefix = query.terms.find((t) => t.length >= 3 && folded.startsWith(t));
      return prefix ? { term: prefix, kind: 'prefix' } : null;
    }
    const byStem = query.terms.findIndex((_, i) => query.languages.some((l) => stems[i]!.has(stem(folded, l))));
    if (byStem >= 0) return { term: query.terms[byStem]!, kind: 'stem' };
    for (const t of typoTerms) if (isTypo(t, folded)) return { term: t, kind: 'typo' };
    const prefix = query.terms.find((t) => t.length >= 3 && folded.startsWith(t));
    return prefix ? { term: prefix, kind: 'prefix' } : null;
  };
}

/**
 * Finds tags named in texts: the lower-case labels whose words occur in a text in a row ("pale-ale"
 * in "a pale ale"). Labels of stop words only, or of one-letter words only ("q#" is "q", a letter
 * formulas are full of), are never named.
 */
export function tagNamer(keys: Iterable<string>): (text: string) => Set<string> {
  const byFirstWord = new Map<string, Array<{ key: string; words: string[] }>>();
  for (const key of keys) {
    const words = labelWords(key);
    if (!words.length || words.every((w) => stopWords.en.has(w)) || words.every((w) => w.length < 2)) continue;
    const list = byFirstWord.get(words[0]!) ?? [];
    list.push({ key, words });
    byFirstWord.set(words[0]!, list);
  }
  return (text) => {
    const words = labelWords(text);
    const named = new Set<string>();
    words.forEach((word, i) => {
      for (const tag of byFirstWord.get(word) ?? []) if (tag.words.every((w, k) => words[i + k] === w)) named.add(tag.key);
    });
    return named;
  };
}
