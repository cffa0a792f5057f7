import type { SearchField } from '@kn/contracts';
import { type MatchKind, queryWords, wordMatcher } from '../core/words.ts';
import { type Highlighting, highlightFields, highlightOrder } from '../domain/highlight.ts';
import { rankedWords } from './match.ts';
import { FIELDS } from './postings.ts';
import type { QuestionTexts, SearchStore } from './store.ts';

/**
 * The highlights of questions for a query: each from the most weighted field with a match (within
 * the allowed fields), and for solutions, comments and attachments from the best matching one.
 * The index says which fields hold a query word (whole or by its stem or a typo first, then a word
 * a prefix begins), so only those texts are read.
 */
export function highlight(
  store: SearchStore,
  ids: readonly number[],
  query: { query: string; fields: SearchField[]; stop_languages: string[] },
  /** The words as the ranking read them (matchQuestions), when it just ran. */
  ranked = rankedWords(store.index, queryWords(query.query, query.stop_languages), null),
): Array<Highlighting | null> {
  const { index } = store;
  const words = queryWords(query.query, query.stop_languages);
  const strong = new Set<number>();
  const prefixed = new Set<number>();
  const forms = new Map<string, { term: string; kind: MatchKind }>();
  for (const w of ranked) {
    if (w.id >= 0) strong.add(w.id);
    for (const form of w.forms)
      for (const id of form.ids) {
        (form.kind === 'prefix' ? prefixed : strong).add(id);
        if (form.kind !== 'prefix' && !forms.has(index.term(id))) forms.set(index.term(id), { term: w.term, kind: form.kind });
      }
  }
  const match = wordMatcher(words, undefined, forms);
  const allowed = FIELDS.reduce((mask, f, i) => (query.fields.includes(f) ? mask | (1 << i) : mask), 0);
  const inFields = (mask: number) => highlightOrder.filter((f) => mask & allowed & (1 << FIELDS.indexOf(f)));
  const slots = ids.map((id) => index.slotOf(id));
  const texts = words.terms.length ? store.texts(ids.filter((_, i) => slots[i]! >= 0)) : new Map<number, QuestionTexts>();
  return index.withWordsOf(
    slots.filter((slot) => slot >= 0),
    () =>
      ids.map((id, i) => {
        const slot = slots[i]!;
        const q = slot >= 0 ? texts.get(id) : undefined;
        if (!q) return null;
        const candidates = [...new Set([...inFields(index.fieldsWith(slot, strong)), ...inFields(index.fieldsWith(slot, prefixed))])];
        return highlightFields({ ...q, parts: (kind) => store.parts(id, kind) }, candidates, match);
      }),
  );
}
