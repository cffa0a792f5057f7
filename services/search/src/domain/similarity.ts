import { type Language, languages, sparseCosine, termCounts, tfidfVector } from '@kn/similarity';
import type { SearchStore } from '../index/store.ts';
import { phrase } from './terms.ts';

/**
 * Similar questions by overall topic: a question with its title, description, tags, solutions
 * and (weakly) comments is one unit (store.ts unitTerms), compared as TF-IDF vectors by cosine
 * similarity. Document frequencies come from the live index, so a new question counts at once.
 */
/** Candidates: the questions sharing the most informative words of the unit, by BM25. */
const CANDIDATES = 200;
const CANDIDATE_TERMS = 24;

type Vector = Map<string, number>;
const isLanguage = (l: string | undefined): l is Language => (languages as readonly string[]).includes(l ?? '');

function weigh(store: SearchStore, counts: Map<string, number>): Vector {
  const n = store.documentCount;
  // Unknown words get the idf of a word seen once: a rare word is informative even if new.
  return tfidfVector(counts, (term) => Math.log((n + 1) / (store.unitFrequency(term) + 0.5)));
}

const vectorOf = (store: SearchStore, text: string, language: string | undefined): Vector =>
  weigh(store, termCounts(text, { language: isLanguage(language) ? language : 'en', stem: false, fold: true }));

export const queryVector = (store: SearchStore, text: string, language?: string) => vectorOf(store, text, language);

/** Cosine similarity of an indexed question's unit to a vector, in [0, 1]. */
export function similarity(store: SearchStore, id: number, vector: Vector): number {
  const counts = store.unitTerms(id);
  return counts ? sparseCosine(weigh(store, counts), vector) : 0;
}

/** Published, live questions most similar to a question or a text, best first, with their cosine. */
export function similarTo(
  store: SearchStore,
  source: { question_id?: number; text?: string; language?: string },
  limit: number,
): Array<{ id: number; score: number }> {
  let vector: Vector;
  if (source.question_id !== undefined) {
    const counts = store.unitTerms(source.question_id);
    if (!counts) return [];
    vector = weigh(store, counts);
  } else vector = vectorOf(store, source.text ?? '', source.language);
  const terms = [...vector].sort((a, b) => b[1] - a[1]).slice(0, CANDIDATE_TERMS);
  if (!terms.length) return [];
  const candidates = store.all<{ id: number }>(
    `select f.rowid as id from question_fts f join questions q on q.id = f.rowid
      where question_fts match ? and q.is_published = 1 and q.is_deleted = 0 and f.rowid <> ?
      order by bm25(question_fts) limit ?`,
    terms.map(([t]) => phrase(t)).join(' OR '),
    source.question_id ?? 0,
    CANDIDATES,
  );
  return candidates
    .map(({ id }) => ({ id, score: similarity(store, id, vector) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || b.id - a.id)
    .slice(0, limit);
}
