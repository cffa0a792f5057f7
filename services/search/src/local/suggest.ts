import { queryTerms } from '../core/words.ts';
import { bm25Idf } from '../domain/ranking.ts';
import { rankSuggestedTags, SUGGESTION_NEIGHBOURS } from '../domain/suggest.ts';
import { Accumulator, fieldWeights } from './postings.ts';
import { scorePhrase, topSlots } from './ranking.ts';
import { similarTo } from './similarity.ts';
import type { SearchStore } from './store.ts';

/**
 * Existing tags for a question text, best first, never new ones: tags whose label occurs in the
 * text as a word, plus the tags of the most similar questions weighted by their similarity. Tags
 * excluded from suggestions never appear. The questions of the `hidden` knowledge spaces (the
 * caller's closed ones) lend nothing, and a tag used only there is not named.
 */
export function suggestTags(
  store: SearchStore,
  text: string,
  limit: number,
  hidden: ReadonlySet<number> = new Set(),
): { total: number; items: string[] } {
  const { index } = store;
  return rankSuggestedTags({
    neighbours: similarTo(store, { text }, SUGGESTION_NEIGHBOURS, { hidden }).map((s) => ({
      score: s.score,
      tags: index.tagsOf(index.slotOf(s.id)),
    })),
    named: [...store.tagsNamedIn(text)].filter((key) => !store.tagUses.onlyIn(key, hidden)),
    tag: (key) => store.tag(key),
    limit,
  });
}

const titles = new Accumulator();
const titleOnly = fieldWeights({ title: 1 });
/** Autocomplete counts at most this many titles. */
const MAX_TOTAL = 1000;

/** Titles of visible questions containing every word of the text, the last one as a prefix, best title match first. */
export function autocomplete(store: SearchStore, text: string, limit: number): { total: number; items: string[] } {
  const { index } = store;
  const terms = queryTerms(text, ['en']);
  if (!terms.length || limit === 0) return { total: 0, items: [] };
  titles.reset(index.slotCount);
  const last = terms.length - 1;
  terms.forEach((term, i) => {
    const bit = (1 << i) >>> 0;
    if (i < last) {
      const id = index.termId(term);
      if (id >= 0) index.scoreTerm(id, bm25Idf(index.count, index.countMatches(id, titleOnly)), titleOnly, bit, titles);
    } else
      scorePhrase(index, index.expand(term), titleOnly, (slot, score) => {
        titles.touch(slot);
        titles.score[slot]! += score;
        titles.exact[slot]! |= bit;
      });
  });
  const every = ((1 << terms.length) >>> 0) - 1 || 0xffffffff;
  let total = 0;
  for (let k = 0; k < titles.size; k++) {
    const slot = titles.touched[k]!;
    const space = index.spaceOf(slot);
    const visible = titles.exact[slot] === every && !index.isDeleted(slot) && !store.closedSpaces.has(space);
    if (visible) total++;
    else titles.score[slot] = -1;
  }
  const best = topSlots(index, titles, limit, () => true);
  const ids = best.map((b) => index.questionId(b.slot));
  const stored = store.titles(ids);
  return { total: Math.min(total, MAX_TOTAL), items: ids.map((id) => stored.get(id)!) };
}
