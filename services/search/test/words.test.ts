import { editDistance, isRare, queryWords, typoEdits, wordMatcher } from '../src/core/words.ts';
import { Vocabulary } from '../src/local/vocabulary.ts';

describe('the word rules of both backends', () => {
  test('a query is analysed in the caller’s languages and the one it is written in', () => {
    expect(queryWords('the hops of the boil', ['en'])).toEqual({ terms: ['hops', 'boil'], languages: ['en'] });
    const german = queryWords('Wie lange dauern die Gärungen?', ['en']);
    expect(german.languages).toEqual(['de', 'en']);
    expect(german.terms).toEqual(['lange', 'dauern', 'garungen']);
    expect(queryWords('the and of', ['en']).terms).toEqual([]);
    expect(queryWords('x', ['en']).terms).toEqual([]);
    expect(queryWords('啤酒 بيرة', ['xx']).terms).toEqual(['啤酒', 'بيرة']);
    expect(queryWords('over-carbonated e-mail', ['en']).terms).toEqual(['carbonated', 'overcarbonated', 'mail', 'email']);
    expect(queryWords('a '.repeat(10) + Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), ['en']).terms).toHaveLength(32);
  });

  test('typos: one edit from five letters, two from nine; a transposition is one edit', () => {
    expect([typoEdits('hops'), typoEdits('lager'), typoEdits('fermentation'), typoEdits('12345')]).toEqual([0, 1, 2, 0]);
    expect(editDistance('furmentation', 'fermentation', 2)).toBe(1);
    expect(editDistance('fremantation', 'fermentation', 2)).toBe(2);
    expect(editDistance('lagre', 'lager', 1)).toBe(1);
    expect(editDistance('stout', 'porter', 1)).toBe(2);
    expect(isRare(0, 100_000)).toBe(true);
    expect(isRare(500, 100_000)).toBe(false);
  });

  test('a word of a text matches a query word whole, by its stem, by a typo (when counted) or as a prefix', () => {
    const match = wordMatcher(queryWords('fermentation hop', ['en']), new Set(['fermentation']));
    expect(match('Fermentation')).toEqual({ term: 'fermentation', kind: 'exact' });
    expect(match('fermenting')).toEqual({ term: 'fermentation', kind: 'stem' });
    expect(match('hopping')).toEqual({ term: 'hop', kind: 'stem' });
    expect(match('fermantation')).toEqual({ term: 'fermentation', kind: 'typo' });
    expect(match('hopfen')).toEqual({ term: 'hop', kind: 'prefix' });
    expect(match('yeast')).toBeNull();
  });

  test('the vocabulary walk finds exactly the words within the edits, like a scan of every word', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const letters = 'abcdeé';
    const words = [
      ...new Set(
        Array.from({ length: 3000 }, () =>
          Array.from({ length: 2 + Math.floor(random() * 8) }, () => letters[Math.floor(random() * letters.length)]).join(''),
        ),
      ),
    ];
    const vocabulary = new Vocabulary();
    for (const [i, w] of words.slice(0, 2000).entries()) vocabulary.add(w, i);
    vocabulary.merge();
    for (const [i, w] of words.slice(2000).entries()) vocabulary.add(w, 2000 + i);
    // Read with the newest words waiting, then with them merged into the sorted ones.
    for (const merged of [false, true]) {
      if (merged) vocabulary.merge();
      for (const term of ['abcde', 'eeeee', 'badcaé', 'aaaaaaaaa', 'cab']) {
        for (const max of [1, 2]) {
          for (const keep of [0, 1]) {
            const near = (w: string) => w.startsWith(term.slice(0, keep)) && editDistance(term, w, max) <= max;
            const expected = words.flatMap((w, i) => (near(w) ? [i] : [])).sort((a, b) => a - b);
            expect(vocabulary.within(term, max, keep, editDistance).sort((a, b) => a - b)).toEqual(expected);
          }
        }
      }
      for (const prefix of ['a', 'ab', 'éa', 'cde', 'b'])
        expect(vocabulary.beginning(prefix)).toEqual(words.flatMap((w, i) => (w.startsWith(prefix) ? [i] : [])));
    }
  });
});
