import type { Client } from '@elastic/elasticsearch';
import type { SearchField } from '@kn/contracts';
import { WINDOW } from '../domain/match.ts';
import type { QueryWords } from '../words.ts';
import { countsTypos, documentFrequencyQuery, frequencyQuery, type TermStatistics } from './queries.ts';
import { documentFrequencies, termStatistics } from './results.ts';

/** Words a cache keeps at most before it starts again. */
const MAX_WORDS = 200_000;

/**
 * Document frequencies of words in a keyword field of the questions (`unit_terms`,
 * `asked_terms`), over published questions. The engine counts them with a terms aggregation that
 * reads every term of every question, which at 20,000 questions took seconds a query; so they are
 * kept between queries, and forgotten when the index moves (the backend's poll sees new positions).
 */
export class DocumentFrequencies {
  private documents: number | null = null;
  private readonly known = new Map<string, number>();
  private generation = 0;
  private readonly client: Client;
  private readonly index: string;
  private readonly field: string;

  constructor(client: Client, index: string, field: string) {
    this.client = client;
    this.index = index;
    this.field = field;
  }

  moved() {
    this.generation++;
    this.known.clear();
    this.documents = null;
  }

  private ask(words: readonly string[]) {
    return this.client.search({ index: this.index, ...documentFrequencyQuery(this.field, words) }).then(documentFrequencies);
  }

  async of(words: Iterable<string>): Promise<{ documents: number; frequency: ReadonlyMap<string, number> }> {
    const all = [...new Set(words)];
    const missing = all.filter((w) => !this.known.has(w));
    if (!missing.length && this.documents !== null) return { documents: this.documents, frequency: this.known };
    const generation = this.generation;
    const answer = await this.ask(missing);
    // The index moved meanwhile: what was known before is gone, so this query answers for every word.
    if (generation !== this.generation) return this.ask(all);
    if (this.known.size + missing.length > MAX_WORDS) this.known.clear();
    for (const w of missing) this.known.set(w, answer.frequency.get(w) ?? 0);
    this.documents = answer.documents;
    return { documents: this.documents, frequency: this.known };
  }
}

/**
 * A match's term statistics (queries.ts frequencyQuery: each word, its stem, typos and prefixes in
 * the fields asked), word by word, kept until the index moves as DocumentFrequencies are: the
 * filter aggregations read every published question, and the same words come back in other queries.
 */
export class MatchFrequencies {
  private documents: number | null = null;
  private readonly known = new Map<string, TermStatistics['frequencies'][number]>();
  private generation = 0;
  private readonly client: Client;
  private readonly index: string;

  constructor(client: Client, index: string) {
    this.client = client;
    this.index = index;
  }

  moved() {
    this.generation++;
    this.known.clear();
    this.documents = null;
  }

  /**
   * The words and stems first; then, only where the ranking reads them, typos (rare words) and
   * prefixes (words in fewer than WINDOW questions). A typo's count builds a Levenshtein automaton
   * per field and segment: on an index fresh from a catch-up (many segments) that was most of the
   * engine's time. A form not counted counts as the whole word, which the ranking never reads.
   */
  private async ask(query: QueryWords, fields: readonly SearchField[]) {
    const search = (forms: Parameters<typeof frequencyQuery>[2]) =>
      this.client.search({ index: this.index, ...frequencyQuery(query, fields, forms) }).then((r) => termStatistics(r, query.terms));
    const words = await search(() => ({ typo: false, prefix: false }));
    const forms = query.terms.map((term, i) => {
      const { whole } = words.frequencies[i]!;
      return { typo: countsTypos(term, { whole }, words.documents), prefix: term.length >= 3 && whole < WINDOW };
    });
    return forms.some((f) => f.typo || f.prefix) ? search((_, i) => forms[i]!) : words;
  }

  async of(query: QueryWords, fields: readonly SearchField[]): Promise<TermStatistics> {
    const key = (term: string) => `${fields.join(' ')}|${query.languages.join(' ')}|${term}`;
    const missing = [...new Set(query.terms.filter((t) => !this.known.has(key(t))))];
    const known = () => ({ documents: this.documents!, frequencies: query.terms.map((t) => this.known.get(key(t))!) });
    if (!missing.length && this.documents !== null) return known();
    const generation = this.generation;
    const answer = await this.ask({ ...query, terms: missing }, fields);
    // The index moved meanwhile: what was known before is gone, so this query answers for every word.
    if (generation !== this.generation) return this.ask(query, fields);
    if (this.known.size + missing.length > MAX_WORDS) this.known.clear();
    for (const [i, t] of missing.entries()) this.known.set(key(t), answer.frequencies[i]!);
    this.documents = answer.documents;
    return known();
  }
}
