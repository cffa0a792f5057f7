import { foldDiacritics, type Language, languages, stopWords, tokenize } from '@kn/similarity';

/** Terms of one query beyond this are ignored: a pasted page is not a better query than its first sentence. */
export const MAX_TERMS = 32;

const isLanguage = (l: string): l is Language => (languages as readonly string[]).includes(l);

/**
 * The words of a query as the index holds them: lower case, diacritics folded, without the stop
 * words of the given languages (the index has no stop words of each question's own language),
 * each once, in query order.
 */
export function queryTerms(text: string, stopLanguages: readonly string[]): string[] {
  const known = stopLanguages.filter(isLanguage);
  const [first = 'en', ...others] = known.length ? known : (['en'] as Language[]);
  const terms = new Set<string>();
  for (const word of tokenize(text, { language: first, stem: false })) {
    if (others.some((l) => stopWords[l].has(word))) continue;
    terms.add(foldDiacritics(word));
    if (terms.size >= MAX_TERMS) break;
  }
  return [...terms];
}

/** An FTS5 string literal: the terms hold only letters and digits, but quoting keeps FTS5 syntax out. */
export const phrase = (term: string) => `"${term.replaceAll('"', '""')}"`;
