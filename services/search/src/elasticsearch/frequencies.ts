import type { Client } from '@elastic/elasticsearch';
import type { SearchField } from '@kn/contracts';
import { type QueryWords, queryStems } from '../core/words.ts';
import { WINDOW } from '../domain/match.ts';
import {
  allFields,
  countsTypos,
  documentFrequencyQuery,
  engineKey,
  frequencyQuery,
  luceneIdf,
  publishedQuery,
  scoredTerms,
  type TermStatistics,
} from './queries.ts';
import { documentFrequencies, termStatistics } from './results.ts';

/** Words a cache keeps at most before it starts again. */
const MAX_WORDS = 200_000;

/**
 * Whole-index figures (published questions, the clock, all live solutions, closed spaces) kept
 * until the index moves: each would otherwise read every question on every request. Concurrent
 * requests share one read.
 */
export class KeptUntilMoved {
  private readonly values = new Map<string, Promise<unknown>>();
  private readonly maps = new Map<string, Map<unknown, unknown>>();
  /** Counts the moves: what was worked out before one is not kept after it. */
  generation = 0;

  moved() {
    this.values.clear();
    for (const map of this.maps.values()) map.clear();
    this.generation++;
  }

  /** A map of values per key (`name`: which map), emptied when the index moves. */
  map<K, V>(name: string): Map<K, V> {
    let map = this.maps.get(name);
    if (!map) {
      map = new Map();
      this.maps.set(name, map);
    }
    return map as Map<K, V>;
  }

  of<T>(key: string, read: () => Promise<T>): Promise<T> {
    const kept = this.values.get(key);
    if (kept) return kept as Promise<T>;
    const value = read();
    this.values.set(key, value);
    // A failed read is not kept (the next request reads again).
    value.catch(() => {
      if (this.values.get(key) === value) this.values.delete(key);
    });
    return value;
  }

  /**
   * The values of many keys (each under `${prefix} ${key}`); those not kept are read together by
   * one `read`, which answers the keys it knows (the others take `absent`).
   */
  async ofEach<T>(
    prefix: string,
    keys: readonly string[],
    read: (missing: string[]) => Promise<ReadonlyMap<string, T>>,
    absent: T,
  ): Promise<Map<string, T>> {
    const name = (key: string) => `${prefix} ${key}`;
    const missing = keys.filter((k) => !this.values.has(name(k)));
    if (missing.length) {
      const answer = read(missing);
      for (const k of missing) this.of(name(k), () => answer.then((m) => m.get(k) ?? absent));
    }
    // A key cleared meanwhile (the index moved) is read again on its own.
    const values = await Promise.all(keys.map((k) => this.of(name(k), () => read([k]).then((m) => m.get(k) ?? absent))));
    return new Map(keys.map((k, i) => [k, values[i]!]));
  }
}

/** Published questions, deleted ones too (the N of every idf), kept until the index moves. */
export const publishedCount = (client: Client, index: string, kept: KeptUntilMoved) =>
  kept.of(`published ${index}`, async () => {
    const total = (await client.search({ index, ...publishedQuery() })).hits.total;
    return typeof total === 'number' ? total : (total?.value ?? 0);
  });

/**
 * Whether the index holds no deleted documents (every copy), kept until it moves: then the term
 * dictionary's document frequencies are exact (a deleted document counts until a merge drops it).
 */
const withoutDeletes = (client: Client, index: string, kept: KeptUntilMoved) =>
  kept.of(`without deletes ${index}`, async () => {
    try {
      return (await client.indices.stats({ index, metric: 'docs' }))._all.total?.docs?.deleted === 0;
    } catch {
      return false;
    }
  });

type Lookups = ReadonlyArray<{ field: string; value: string }>;

/** Each value's document frequency (under engineKey) and the documents with each field. */
interface LookedUp {
  docFreq: ReadonlyMap<string, number>;
  docCount: ReadonlyMap<string, number>;
}

/**
 * Fields' values in the term dictionary: `_termvectors` of the values as an artificial document
 * (each value its own: a keyword field's too), one lookup a value. Deleted documents count in the
 * answers until a merge drops them.
 */
async function termDictionary(client: Client, index: string, terms: Lookups): Promise<LookedUp> {
  const docFreq = new Map<string, number>();
  const docCount = new Map<string, number>();
  const byField = new Map<string, Set<string>>();
  for (const { field, value } of terms) byField.set(field, (byField.get(field) ?? new Set()).add(value));
  if (!byField.size) return { docFreq, docCount };
  const doc: Record<string, string[] | Record<string, string[]>> = {};
  for (const [field, values] of byField) {
    const [object, name] = field.split('.') as [string, string | undefined];
    doc[object] = name === undefined ? [...values] : { ...(doc[object] as Record<string, string[]> | undefined), [name]: [...values] };
  }
  const response = await client.termvectors({
    index,
    doc,
    fields: [...byField.keys()],
    term_statistics: true,
    field_statistics: true,
    positions: false,
    offsets: false,
    payloads: false,
  });
  for (const [field, values] of byField) {
    const vector = response.term_vectors?.[field];
    docCount.set(field, vector?.field_statistics?.doc_count ?? 0);
    for (const value of values) docFreq.set(engineKey(field, value), vector?.terms?.[value]?.doc_freq ?? 0);
  }
  return { docFreq, docCount };
}

/**
 * The term dictionary of the questions index, read by every cache of the backend: the lookups
 * asked in one turn of the event loop go in one `_termvectors` call (a new query's match counts
 * and its words' unit frequencies: backend.ts match): a request costs the engine about 3 ms of
 * CPU whatever it asks (a `_termvectors` call of a few words as much as an index's stats).
 */
export class TermDictionary {
  private pending: Array<{ terms: Lookups; resolve: (answer: LookedUp) => void; reject: (err: unknown) => void }> = [];
  private readonly client: Client;
  private readonly index: string;

  constructor(client: Client, index: string) {
    this.client = client;
    this.index = index;
  }

  lookUp(terms: Lookups): Promise<LookedUp> {
    if (!terms.length) return Promise.resolve({ docFreq: new Map(), docCount: new Map() });
    return new Promise((resolve, reject) => {
      if (!this.pending.length) setImmediate(() => this.flush());
      this.pending.push({ terms, resolve, reject });
    });
  }

  private flush() {
    const batch = this.pending;
    this.pending = [];
    termDictionary(
      this.client,
      this.index,
      batch.flatMap((b) => b.terms),
    ).then(
      (answer) => {
        for (const b of batch) b.resolve(answer);
      },
      (err) => {
        for (const b of batch) b.reject(err);
      },
    );
  }
}

/**
 * Document frequencies of words in a keyword field of the questions (`unit_terms`,
 * `asked_terms`), over published questions (drafts have none of these words), kept between
 * queries until the index moves (the backend's poll sees new positions). Without deleted documents
 * (after the feed's merge) they come from the term dictionary (`_termvectors` of the words as an
 * artificial document: a lookup a word, 1,500 words in about 25 ms at 5,000 questions); otherwise
 * from a terms aggregation, which reads every word of each question it collects, so only the
 * questions with one of the words are collected (about 150 ms for 1,500 words at 5,000).
 */
export class DocumentFrequencies {
  private readonly known = new Map<string, number>();
  private generation = 0;
  private readonly client: Client;
  private readonly index: string;
  private readonly field: string;
  private readonly kept: KeptUntilMoved;
  private readonly dictionary: TermDictionary;

  /** `kept` and `dictionary`: shared with the backend's other caches (its own unless given); `kept` is moved with them. */
  constructor(client: Client, index: string, field: string, kept = new KeptUntilMoved(), dictionary = new TermDictionary(client, index)) {
    this.client = client;
    this.index = index;
    this.field = field;
    this.kept = kept;
    this.dictionary = dictionary;
  }

  moved() {
    this.generation++;
    this.known.clear();
    this.kept.moved();
  }

  private async ask(words: readonly string[]): Promise<Map<string, number>> {
    if (!words.length) return new Map();
    if (await withoutDeletes(this.client, this.index, this.kept)) return this.lookUp(words);
    return documentFrequencies(await this.client.search({ index: this.index, ...documentFrequencyQuery(this.field, words) }));
  }

  private async lookUp(words: readonly string[]) {
    const { docFreq } = await this.dictionary.lookUp(words.map((value) => ({ field: this.field, value })));
    return new Map(words.map((w) => [w, docFreq.get(engineKey(this.field, w)) ?? 0]));
  }

  /**
   * Looks words up ahead, only where the term dictionary answers (no deleted document): then in
   * the call of another lookup of the same turn (backend.ts match: a new query's words with its
   * match counts). Otherwise left to `of`, which asks them with the rest in one aggregation.
   */
  async prime(words: Iterable<string>) {
    const missing = [...new Set(words)].filter((w) => !this.known.has(w));
    const generation = this.generation;
    if (!missing.length || !(await withoutDeletes(this.client, this.index, this.kept))) return;
    const answer = await this.lookUp(missing);
    if (generation !== this.generation) return;
    if (this.known.size + missing.length > MAX_WORDS) this.known.clear();
    for (const w of missing) this.known.set(w, answer.get(w) ?? 0);
  }

  async of(words: Iterable<string>): Promise<{ documents: number; frequency: ReadonlyMap<string, number> }> {
    const all = [...new Set(words)];
    const missing = all.filter((w) => !this.known.has(w));
    const generation = this.generation;
    const [documents, answer] = await Promise.all([publishedCount(this.client, this.index, this.kept), this.ask(missing)]);
    // The index moved meanwhile: what was known before is gone, so this query answers for every word.
    if (generation !== this.generation) {
      const [now, frequency] = await Promise.all([publishedCount(this.client, this.index, this.kept), this.ask(all)]);
      return { documents: now, frequency };
    }
    if (this.known.size + missing.length > MAX_WORDS) this.known.clear();
    for (const w of missing) this.known.set(w, answer.get(w) ?? 0);
    // A copy of the words asked: a move clears what is known while the caller still reads it.
    return { documents, frequency: new Map(all.map((w) => [w, this.known.get(w) ?? answer.get(w) ?? 0])) };
  }
}

/**
 * The engine's own idf (Lucene's BM25 idf in the field) of fields' values, from the term
 * dictionary. Deleted documents count in it as they do in the engine's scoring, so the two always agree.
 */
const engineIdfs = (dictionary: LookedUp, terms: Lookups) =>
  new Map(
    terms.map(({ field, value }) => [
      engineKey(field, value),
      luceneIdf(dictionary.docCount.get(field) ?? 0, dictionary.docFreq.get(engineKey(field, value)) ?? 0),
    ]),
  );

type KnownTerm = TermStatistics['frequencies'][number] & { engine: Array<[string, number]> };

/**
 * A match's term statistics (queries.ts frequencyQuery: each word, its stem, typos and prefixes in
 * the fields asked; and the engine's idfs the ranking divides out), word by word, kept until the
 * index moves as DocumentFrequencies are: the same words come back in other queries. A request of
 * every field, on an index without deleted documents, looks a word's count and its stem's up in
 * the term dictionary of the combined fields (mappings.ts `all_words`, `all_stems`), in the same
 * `_termvectors` call that reads the engine's idfs: drafts and stubs have no words (documents.ts
 * withDerived), deleted questions keep theirs, so a document frequency there is the local engine's
 * count, published questions, deleted ones too. Otherwise (some fields only, a deleted document
 * not merged away yet, a word of several stems) a filter aggregation over every published question
 * counts them.
 */
export class MatchFrequencies {
  private documents: number | null = null;
  private readonly known = new Map<string, KnownTerm>();
  private generation = 0;
  private readonly client: Client;
  private readonly index: string;
  private readonly kept: KeptUntilMoved;
  private readonly dictionary: TermDictionary;

  /** `kept` and `dictionary`: shared with the backend's other caches (its own unless given); `kept` is moved with them. */
  constructor(client: Client, index: string, kept = new KeptUntilMoved(), dictionary = new TermDictionary(client, index)) {
    this.client = client;
    this.index = index;
    this.kept = kept;
    this.dictionary = dictionary;
  }

  moved() {
    this.generation++;
    this.known.clear();
    this.documents = null;
    this.kept.moved();
  }

  /**
   * The words and stems first; then, only where the ranking reads them, typos (rare words) and
   * prefixes (words in fewer than WINDOW questions), and the stems not looked up. A typo's count
   * builds a Levenshtein automaton per field and segment: on an index fresh from a catch-up (many
   * segments) that was most of the engine's time. A form not counted counts as the whole word, which
   * the ranking never reads.
   */
  private async ask(query: QueryWords, fields: readonly SearchField[]): Promise<TermStatistics> {
    const search = (forms: Parameters<typeof frequencyQuery>[2], known?: Parameters<typeof termStatistics>[2]) =>
      this.client.search({ index: this.index, ...frequencyQuery(query, fields, forms) }).then((r) => termStatistics(r, query.terms, known));
    const scored = scoredTerms(query, fields).flat();
    const stems = query.terms.map((t) => [...queryStems(t, query.languages)]);
    // A deleted document counts in the term dictionary until a merge drops it; the union of a word's stems is not a document frequency.
    const lookedUp = query.terms.length > 0 && allFields(fields) && (await withoutDeletes(this.client, this.index, this.kept));
    const lookups = lookedUp
      ? [
          ...query.terms.map((value) => ({ field: 'all_words', value })),
          ...stems.flatMap((s) => (s.length === 1 ? [{ field: 'all_stems', value: s[0]! }] : [])),
        ]
      : [];
    const [dictionary, counted] = await Promise.all([
      this.dictionary.lookUp([...scored, ...lookups]),
      lookedUp ? publishedCount(this.client, this.index, this.kept) : search(() => ({ typo: false, prefix: false })),
    ]);
    const documents = typeof counted === 'number' ? counted : counted.documents;
    const known =
      typeof counted === 'number'
        ? query.terms.map((term, i) => ({
            whole: dictionary.docFreq.get(engineKey('all_words', term)) ?? 0,
            stem: stems[i]!.length === 1 ? (dictionary.docFreq.get(engineKey('all_stems', stems[i]![0]!)) ?? 0) : undefined,
          }))
        : counted.frequencies;
    const forms = query.terms.map((term, i) => {
      const { whole, stem } = known[i]!;
      return {
        whole: false,
        stem: stem === undefined,
        typo: countsTypos(term, { whole }, documents),
        prefix: term.length >= 3 && whole < WINDOW,
      };
    });
    const frequencies = forms.some((f) => f.stem || f.typo || f.prefix)
      ? await search((_, i) => forms[i]!, known)
      : { documents, frequencies: known.map(({ whole, stem }) => ({ whole, stem: stem ?? whole, typo: whole, prefix: whole })) };
    return { ...frequencies, engine: engineIdfs(dictionary, scored) };
  }

  async of(query: QueryWords, fields: readonly SearchField[]): Promise<TermStatistics> {
    const key = (term: string) => `${fields.join(' ')}|${query.languages.join(' ')}|${term}`;
    const missing = [...new Set(query.terms.filter((t) => !this.known.has(key(t))))];
    const known = () => {
      const terms = query.terms.map((t) => this.known.get(key(t))!);
      return {
        documents: this.documents!,
        frequencies: terms.map(({ engine: _, ...frequency }) => frequency),
        engine: new Map(terms.flatMap((t) => t.engine)),
      };
    };
    if (!missing.length && this.documents !== null) return known();
    const generation = this.generation;
    const answer = await this.ask({ ...query, terms: missing }, fields);
    // The index moved meanwhile: what was known before is gone, so this query answers for every word.
    if (generation !== this.generation) return this.ask(query, fields);
    if (this.known.size + missing.length > MAX_WORDS) this.known.clear();
    const scored = scoredTerms({ ...query, terms: missing }, fields);
    for (const [i, t] of missing.entries()) {
      const engine = scored[i]!.map(({ field, value }): [string, number] => [
        engineKey(field, value),
        answer.engine.get(engineKey(field, value)) ?? 0,
      ]);
      this.known.set(key(t), { ...answer.frequencies[i]!, engine });
    }
    this.documents = answer.documents;
    return known();
  }
}
