import { TermIndex } from '../src/local/postings.ts';
import { SlotRuns } from '../src/local/slot-runs.ts';

describe('runs of ids per slot', () => {
  test('each slot reads back its last run through growth and compaction, weighted or not', () => {
    for (const weighted of [true, false]) {
      const runs = new SlotRuns({ weighted });
      const expected = new Map<number, number[]>();
      // Slots set again and again, some cleared: the arrays grow, then fill with dead runs and are compacted.
      for (let round = 0; round < 40; round++)
        for (let slot = 0; slot < 300; slot++) {
          if ((slot + round) % 7 === 0) {
            runs.clear(slot);
            expected.delete(slot);
            continue;
          }
          const ids = Array.from({ length: (slot * 13 + round) % 9 }, (_, k) => slot * 1000 + round * 10 + k);
          runs.set(
            slot,
            ids,
            ids.map((id) => (id % 255) + 1),
          );
          if (ids.length) expected.set(slot, ids);
          else expected.delete(slot);
        }
      for (let slot = 0; slot < 310; slot++) {
        const ids = expected.get(slot) ?? [];
        expect([...runs.of(slot)]).toEqual(ids);
        expect(runs.count(slot)).toBe(ids.length);
        if (weighted) {
          const from = runs.start(slot);
          expect([...runs.weights.subarray(from, from + ids.length)]).toEqual(ids.map((id) => (id % 255) + 1));
        }
      }
      // Compaction kept the arrays near the live runs' size (about 4 ids a slot live, 40 rounds set).
      expect(runs.ids.length).toBeLessThan(300 * 9 * 4);
      expect(runs.weights.length).toBe(weighted ? runs.ids.length : 0);
    }
  });

  test('an index keeps each question’s tags as written, through changes and removal', () => {
    const index = new TermIndex();
    const facets = (tags: string[]) => ({
      author_id: 1,
      language: 'en',
      category_id: null,
      knowledge_space_id: null,
      is_deleted: false,
      tags,
      time: 0,
    });
    const words = new Int32Array([index.internTerm('hops'), 1]);
    index.put(1, words, 1, facets(['Hops', 'yeast']));
    index.put(2, words, 1, facets(['hops']));
    expect(index.tagsOf(index.slotOf(1))).toEqual(['Hops', 'yeast']);
    expect(index.facets(index.slotOf(2))?.tags).toEqual(['hops']);
    expect(index.tags.get('hops')?.count).toBe(2);
    index.put(1, words, 1, facets(['malt']));
    expect(index.tagsOf(index.slotOf(1))).toEqual(['malt']);
    expect([index.tags.get('hops')?.count, index.tags.has('yeast')]).toEqual([1, false]);
    index.remove(2);
    expect(index.holds(index.slotOf(2))).toBe(false);
    expect(index.tagsOf(index.slotOf(2))).toEqual([]);
    expect(index.facets(index.slotOf(2))).toBeNull();
    expect(index.tags.has('hops')).toBe(false);
    expect(index.slotCount).toBe(2);
  });
});
