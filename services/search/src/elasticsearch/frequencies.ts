import type { Client } from '@elastic/elasticsearch';
import { documentFrequencyQuery } from './queries.ts';
import { documentFrequencies } from './results.ts';

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
