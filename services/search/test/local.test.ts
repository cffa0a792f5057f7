import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SearchFieldNames } from '@kn/contracts';
import type { IndexedQuestion } from '../src/core/events.ts';
import { Expertise, type SolutionFacts, solutionValue, timeWeight } from '../src/domain/expertise.ts';
import { matchQuestions } from '../src/local/match.ts';
import { Accumulator, askedCounts, FIELDS, fieldWeights, packCounts, TermIndex, unpackCounts } from '../src/local/postings.ts';
import { topSlots } from '../src/local/ranking.ts';
import { similarTo, textVector } from '../src/local/similarity.ts';
import { SearchStore } from '../src/local/store.ts';
import { autocomplete } from '../src/local/suggest.ts';
import { TagUses } from '../src/local/tag-uses.ts';

const facets = { author_id: 1, language: 'en', category_id: null, knowledge_space_id: null, is_deleted: false, tags: [], time: 0 };
const all = fieldWeights({ title: 1, description: 1, tags: 1, solutions: 1, comments: 1, attachments: 1 });

/** A question's Forward from words with their per-field counts. */
const words = (index: TermIndex, entries: Array<[string, number[]]>) =>
  Int32Array.from(entries.flatMap(([word, counts]) => [index.internTerm(word), packCounts(counts)]));

function scores(index: TermIndex, term: string) {
  const acc = new Accumulator();
  acc.reset(index.slotCount);
  index.scoreTerm(index.termId(term), 1, all, 1, acc);
  const out: Record<number, number> = {};
  for (let i = 0; i < acc.size; i++) out[index.questionId(acc.touched[i]!)] = acc.score[acc.touched[i]!]!;
  return out;
}

describe('TermIndex', () => {
  test('packs six field frequencies into one number, each capped at its width', () => {
    expect(unpackCounts(packCounts([1, 2, 3, 300, 5, 6]))).toEqual([1, 2, 3, 255, 5, 6]);
    expect(unpackCounts(packCounts([99, 99, 99, 999, 99, 99]))).toEqual([15, 63, 7, 255, 63, 31]);
    expect(packCounts([0, 0, 0, 0, 0, 0])).toBe(0);
    expect(packCounts([0, 0, 0, 0, 0, 1])).not.toBe(0);
  });

  test("a phrase's counts are kept only while the index holds what they counted", () => {
    const index = new TermIndex();
    const malt = (counts: number[]) =>
      words(index, [
        ['malt', counts],
        ['malty', [0, 1, 0, 0, 0, 0]],
      ]);
    index.put(1, malt([1, 0, 0, 0, 0, 0]), 2, facets);
    const phrases = [[index.termId('malt'), index.termId('malty')], [index.termId('malt')]];
    const all = fieldWeights({ title: 1, description: 1 });
    expect(index.phraseCounts(phrases, all)).toEqual([1, 1]);
    index.put(2, malt([0, 2, 0, 0, 0, 0]), 3, facets);
    expect(index.phraseCounts(phrases, all)).toEqual([2, 2]);
    expect(index.phraseCounts(phrases, fieldWeights({ title: 1 }))).toEqual([1, 1]);
    index.remove(1);
    expect(index.phraseCounts(phrases, all)).toEqual([1, 1]);
  });

  test('the scoring reads each field where the packing put it', () => {
    const index = new TermIndex();
    const counts = [9, 40, 5, 200, 33, 17];
    index.put(1, words(index, [['malt', counts]]), 1, facets);
    expect(askedCounts(packCounts(counts))).toEqual(counts.slice(0, 3));
    FIELDS.forEach((field, i) => {
      const scored = index.scoredWord([[index.termId('malt')]], fieldWeights({ [field]: 1 }), [{ idf: 1, weight: null }], 1);
      scored.fill(Number.POSITIVE_INFINITY);
      expect([field, scored.size, scored.adds[0]]).toEqual([field, 1, index.wordScore(index.slotOf(1), 1, counts[i]!)]);
    });
  });

  test("a phrase's frequencies: every question with one of its words, in slot order, the words' frequencies summed in their order", () => {
    const index = new TermIndex();
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const vocabulary = Array.from({ length: 40 }, (_, w) => `hop${w}`);
    // Changed and removed questions leave dead postings behind; some words are in no title.
    const said = new Map<number, Map<string, number[]>>();
    for (let round = 0; round < 2; round++)
      for (let q = 1; q <= 3000; q++) {
        // A word of a question is in one field at least (a Forward's 0 would be a dead posting).
        const counts = () => [random() < 0.5 ? 1 : 0, 1 + Math.floor(random() * 2), 0, 0, random() < 0.2 ? 2 : 0, 0];
        said.set(q, new Map(vocabulary.filter(() => random() < 0.1).map((w) => [w, counts()])));
        index.put(q, words(index, [...said.get(q)!]), 10, facets);
      }
    for (let q = 1; q <= 3000; q += 7) {
      index.remove(q);
      said.delete(q);
    }
    // Weights whose sums depend on their order (0.1 + 0.7 + 0.1 is not 0.1 + 0.1 + 0.7).
    const weights = fieldWeights({ title: 10, description: 0.1, comments: 0.7 });
    const titleOnly = fieldWeights({ title: 10 });
    for (const [n, w] of [
      [1, weights],
      [3, weights],
      [16, weights],
      [17, weights],
      [40, weights],
      [40, titleOnly],
    ] as const) {
      const phrase = vocabulary.slice(0, n);
      const expected = new Map<number, number>();
      for (const [q, counts] of said) {
        let sum = 0;
        for (const word of phrase) {
          const f = (counts.get(word) ?? []).reduce((total, c, field) => total + c * w[field]!, 0);
          if (f > 0) sum += f;
        }
        if (sum > 0) expected.set(index.slotOf(q), sum);
      }
      const ordered = [...expected].sort((a, b) => a[0] - b[0]);
      const ids = phrase.map((word) => index.termId(word));
      const scored = index.scoredWord([ids], w, [{ idf: 1, weight: 1 }], 0);
      scored.fill(Number.POSITIVE_INFINITY);
      expect(ordered.length).toBeGreaterThan(n === 1 ? 10 : 50);
      expect({
        n,
        slots: [...scored.slots.subarray(0, scored.size)],
        adds: [...scored.adds.subarray(0, scored.size)],
        counts: index.phraseCounts([ids], w),
      }).toEqual({
        n,
        slots: ordered.map(([slot]) => slot),
        adds: ordered.map(([slot, sum]) => index.saturate(slot, sum)),
        counts: [ordered.length],
      });
    }

    // Several phrases at once (a word and its forms): a question gets the first phrase it has, at
    // that phrase's sum and scale; each phrase counts every question it has. Phrases share words.
    // As a word's phrases are: each later one adds less at most.
    const scales = [
      { idf: 2, weight: null },
      { idf: 1.5, weight: 0.7 },
      { idf: 3, weight: 0.1 },
    ];
    const scaled = (slot: number, p: number, sum: number) =>
      scales[p]!.weight === null
        ? index.wordScore(slot, scales[p]!.idf, sum)
        : scales[p]!.weight! * (scales[p]!.idf * index.saturate(slot, sum));
    for (const phrases of [
      [vocabulary.slice(0, 1), vocabulary.slice(0, 4), vocabulary.slice(20, 40)],
      [vocabulary.slice(5, 6), vocabulary.slice(6, 7)],
      [[], vocabulary.slice(30, 33), vocabulary.slice(1, 2)],
    ]) {
      const expected = new Map<number, { phrase: number; sum: number }>();
      const counts = phrases.map(() => 0);
      for (const [q, told] of said)
        phrases.forEach((phrase, p) => {
          const fs = phrase.map((word) => (told.get(word) ?? []).reduce((total, c, field) => total + c * weights[field]!, 0));
          if (!fs.some((f) => f > 0)) return;
          counts[p]!++;
          if (!expected.has(q)) expected.set(q, { phrase: p, sum: fs.reduce((sum, f) => (f > 0 ? sum + f : sum), 0) });
        });
      const ordered = [...expected].map(([q, e]) => ({ slot: index.slotOf(q), ...e })).sort((a, b) => a.slot - b.slot);
      const ids = phrases.map((phrase) => phrase.map((word) => index.termId(word)));
      const found = index.scoredWord(ids, weights, scales, 1);
      found.fill(Number.POSITIVE_INFINITY);
      const read = { slots: found.slots, adds: found.adds, whole: found.whole };
      expect(ordered.length).toBeGreaterThan(300);
      expect({
        ...Object.fromEntries(Object.entries(read).map(([name, values]) => [name, [...values.subarray(0, found.size)]])),
        counts: index.phraseCounts(ids, weights),
      }).toEqual({
        slots: ordered.map((o) => o.slot),
        adds: ordered.map((o) => scaled(o.slot, o.phrase, o.sum)),
        whole: ordered.map((o) => (o.phrase === 0 ? 1 : 0)),
        counts,
      });

      // Read a chunk at a time: once what the later phrases add at most is under what is needed,
      // their questions are left out from there on, and the first phrase's still come.
      const chunked = index.scoredWord(ids, weights, scales, 1);
      chunked.has(0, Number.NEGATIVE_INFINITY);
      const first = chunked.reached;
      expect(first).toBeLessThan(ordered.at(-1)!.slot);
      const laterMost = Math.max(
        ...phrases.slice(1).map((phrase, p) => (phrase.length ? scales[p + 1]!.weight! * scales[p + 1]!.idf * 2.2 : 0)),
      );
      chunked.fill(Number.POSITIVE_INFINITY, laterMost * 1.01);
      const kept = ordered.filter((o) => o.slot < first || o.phrase === 0);
      expect(kept.length).toBeLessThan(ordered.length);
      expect([...chunked.slots.subarray(0, chunked.size)]).toEqual(kept.map((o) => o.slot));
      expect([...chunked.adds.subarray(0, chunked.size)]).toEqual(kept.map((o) => scaled(o.slot, o.phrase, o.sum)));
    }
  });

  test('what each question asked stays its own through re-indexing, removal and the compaction of its arrays', () => {
    const index = new TermIndex();
    // Question q asks word-q in its title and word-q-b in its description; its answers say answer-q.
    const asked = (q: number, round: number) =>
      words(index, [
        [`word-${q}`, [1, 0, 0, 0, 0, 0]],
        [`answer-${q}`, [0, 0, 0, 3, 0, 0]],
        [`word-${q}-${round}`, [0, 2, 0, 0, 0, 0]],
      ]);
    for (let q = 1; q <= 3_000; q++) index.put(q, asked(q, 0), 3, facets, null);
    // Every other question indexed again, many times over: the runs it leaves behind are compacted away.
    for (let round = 1; round <= 5; round++)
      for (let q = 2; q <= 3_000; q += 2) index.put(q, asked(q, round), 3, facets, asked(q, round - 1));
    for (let q = 3; q <= 3_000; q += 30) index.remove(q, asked(q, 0));
    const termsOf = (q: number) => [...index.askedTerms(index.slotOf(q))].map((id) => index.term(id)).sort();
    expect(termsOf(1)).toEqual(['word-1', 'word-1-0']);
    expect(termsOf(2_000)).toEqual(['word-2000', 'word-2000-5']);
    expect(termsOf(3)).toEqual([]);
    const dense = new Float64Array(index.termCount);
    dense[index.termId('word-2000')] = 1;
    expect(index.askedCosine(index.slotOf(2_000), dense)).toBeGreaterThan(0.3);
    expect(index.askedCosine(index.slotOf(1_999), dense)).toBe(0);
  });

  test('slots past 16 bits are kept and found (a posting holds a slot in two halves)', () => {
    const index = new TermIndex();
    for (let id = 1; id <= 70_000; id++) index.put(id, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    index.put(66_000, words(index, [['malt', [0, 2, 0, 0, 0, 0]]]), 1, facets);
    index.remove(69_999);
    const found = scores(index, 'malt');
    expect(Object.keys(found)).toHaveLength(69_999);
    expect(found[69_999]).toBeUndefined();
    expect(found[70_000]).toBe(found[1]);
    expect(found[66_000]).toBeGreaterThan(found[1]!);
  });

  test('when every code of counts is taken, new counts score as the nearest counts there are', () => {
    const limited = new TermIndex({ countCodes: 3 });
    const plain = new TermIndex();
    for (const index of [limited, plain]) {
      index.put(1, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
      index.put(2, words(index, [['malt', [4, 0, 0, 0, 0, 0]]]), 1, facets);
      index.put(3, words(index, [['malt', [3, 0, 0, 0, 0, 0]]]), 1, facets);
      index.put(4, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    }
    const few = scores(limited, 'malt');
    const exact = scores(plain, 'malt');
    expect([few[1], few[2], few[4]]).toEqual([exact[1], exact[2], exact[4]]);
    expect(exact[3]).toBeLessThan(exact[2]!);
    expect(few[3]).toBe(exact[2]);
  });

  test('when every code is taken, new counts keep the fields they are in', () => {
    const limited = new TermIndex({ countCodes: 3 });
    limited.put(1, words(limited, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    limited.put(2, words(limited, [['malt', [0, 4, 0, 0, 0, 0]]]), 1, facets);
    // Nearer in counts to the title-only code (1 + 1) than to the description one (3), but only in the description.
    limited.put(3, words(limited, [['malt', [0, 1, 0, 0, 0, 0]]]), 1, facets);
    const acc = new Accumulator();
    acc.reset(limited.slotCount);
    limited.scoreTerm(limited.termId('malt'), 1, fieldWeights({ description: 1 }), 1, acc);
    const found = Array.from(acc.touched.subarray(0, acc.size), (slot) => limited.questionId(slot)).sort();
    expect(found).toEqual([2, 3]);
  });

  test('postings stay in slot order through updates, removals and compaction', () => {
    const index = new TermIndex();
    for (let id = 1; id <= 40; id++) index.put(id, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    // Re-put older questions (their postings revive in place), remove most of them (compaction), add again.
    for (let id = 1; id <= 40; id += 3) index.put(id, words(index, [['malt', [0, 2, 0, 0, 0, 0]]]), 2, facets);
    for (let id = 1; id <= 30; id++) index.remove(id);
    for (let id = 5; id <= 10; id++) index.put(id, words(index, [['malt', [3, 0, 0, 0, 0, 0]]]), 3, facets);
    const found = scores(index, 'malt');
    expect(
      Object.keys(found)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([5, 6, 7, 8, 9, 10, ...Array.from({ length: 10 }, (_, i) => 31 + i)]);
    expect(index.documentFrequency(index.termId('malt'))).toBe(16);
  });

  test('a word counted in no field is no posting: taking its question out later leaves the other questions’ postings', () => {
    const index = new TermIndex();
    // Question 1 lists 'malt' with no count (a Forward may carry such an entry); 2..21 have it.
    index.put(
      1,
      words(index, [
        ['malt', [0, 0, 0, 0, 0, 0]],
        ['hops', [1, 0, 0, 0, 0, 0]],
      ]),
      1,
      facets,
    );
    for (let id = 2; id <= 21; id++) index.put(id, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    // Most of them go: the list is compacted, then question 1 goes too.
    for (let id = 2; id <= 12; id++) index.remove(id);
    index.remove(1);
    expect(
      Object.keys(scores(index, 'malt'))
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 9 }, (_, i) => 13 + i));
    expect(index.documentFrequency(index.termId('malt'))).toBe(9);
  });

  test("trimming gives back the lists' growing room and keeps every posting", () => {
    const index = new TermIndex();
    for (let id = 1; id <= 100; id++) index.put(id, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    const before = scores(index, 'malt');
    index.trim();
    expect(scores(index, 'malt')).toEqual(before);
    index.put(101, words(index, [['malt', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    expect(Object.keys(scores(index, 'malt'))).toHaveLength(101);
  });

  test('lists move between shared blocks as they grow, shrink and are trimmed, and keep every posting', () => {
    // Blocks of 256 cells (85 postings): the lists of ~12 postings grow inside them, and the list of
    // the word every question has outgrows a quarter of a block and gets a block of its own.
    const small = new TermIndex({ listBlock: 256 });
    const plain = new TermIndex();
    const vocabulary = [...Array.from({ length: 30 }, (_, i) => `word${i}`), 'everywhere'];
    const question = (id: number, round: number) =>
      vocabulary
        .filter((w, i) => w === 'everywhere' || (id * 7 + i * 3 + round) % 5 === 0)
        .map((w, i): [string, number[]] => [w, [1 + ((id + i) % 3), 0, 0, 0, 0, 0]]);
    const both = (visit: (index: TermIndex) => void) => [small, plain].forEach(visit);
    for (let id = 1; id <= 60; id++) both((index) => index.put(id, words(index, question(id, 0)), 3, facets));
    for (let id = 1; id <= 60; id += 2) both((index) => index.put(id, words(index, question(id, 1)), 3, facets));
    for (let id = 3; id <= 60; id += 3) both((index) => index.remove(id));
    const same = () => {
      for (const w of vocabulary) expect([w, scores(small, w)]).toEqual([w, scores(plain, w)]);
    };
    same();
    const { held, live } = small.listUsage;
    // Blocks that lists mostly left are emptied: what is held is mostly lists (one newest block aside).
    expect(held - 256).toBeLessThanOrEqual(live / 0.75);
    both((index) => index.trim());
    same();
    expect(small.listUsage.held - small.listUsage.live).toBeLessThan(256);
    for (let id = 61; id <= 70; id++) both((index) => index.put(id, words(index, question(id, 2)), 3, facets));
    same();
  });

  test('a changed question is found by its new words only; counts follow', () => {
    const index = new TermIndex();
    index.put(
      1,
      words(index, [
        ['hops', [1, 0, 0, 0, 0, 0]],
        ['boil', [0, 2, 0, 0, 0, 0]],
      ]),
      3,
      facets,
    );
    index.put(2, words(index, [['hops', [0, 1, 0, 0, 0, 0]]]), 1, facets);
    expect(Object.keys(scores(index, 'hops'))).toEqual(['1', '2']);
    expect(index.documentFrequency(index.termId('hops'))).toBe(2);
    index.put(1, words(index, [['yeast', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    expect(Object.keys(scores(index, 'hops'))).toEqual(['2']);
    expect(Object.keys(scores(index, 'yeast'))).toEqual(['1']);
    expect(index.documentFrequency(index.termId('boil'))).toBe(0);
    expect(index.count).toBe(2);
    index.remove(2);
    expect(scores(index, 'hops')).toEqual({});
    expect(index.count).toBe(1);
  });

  test('stale postings are compacted away and never counted', () => {
    const index = new TermIndex();
    for (let round = 0; round < 50; round++)
      for (let id = 1; id <= 40; id++) index.put(id, words(index, [['beer', [0, round + 1, 0, 0, 0, 0]]]), round + 1, facets);
    const found = scores(index, 'beer');
    expect(Object.keys(found)).toHaveLength(40);
    expect(index.documentFrequency(index.termId('beer'))).toBe(40);
  });

  test('prefix expansion finds the live words a prefix begins', () => {
    const index = new TermIndex();
    index.put(
      1,
      words(index, [
        ['hops', [1, 0, 0, 0, 0, 0]],
        ['hopping', [1, 0, 0, 0, 0, 0]],
      ]),
      2,
      facets,
    );
    index.put(2, words(index, [['hopfen', [1, 0, 0, 0, 0, 0]]]), 1, facets);
    const begun = (p: string) =>
      index
        .expand(p)
        .map((id) => index.term(id))
        .sort();
    expect(begun('hop')).toEqual(['hopfen', 'hopping', 'hops']);
    expect(begun('hopp')).toEqual(['hopping']);
    index.remove(2);
    expect(begun('hop')).toEqual(['hopping', 'hops']);
    expect(index.tags.size).toBe(0);
    // Words sorted in (opening an index sorts them) and words added since are both found, in id order.
    index.load(() => []);
    index.put(
      3,
      words(index, [
        ['hopper', [1, 0, 0, 0, 0, 0]],
        ['hoof', [1, 0, 0, 0, 0, 0]],
        ['hopfen', [1, 0, 0, 0, 0, 0]],
      ]),
      3,
      facets,
    );
    expect(begun('hop')).toEqual(['hopfen', 'hopper', 'hopping', 'hops']);
    const ids = index.expand('hop');
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(begun('ho')).toEqual(['hoof', 'hopfen', 'hopper', 'hopping', 'hops']);
  });
});

describe('Expertise', () => {
  test("a question's live solutions follow additions and removals, of this question only", () => {
    const expertise = new Expertise();
    const solution = (id: number, question_id: number, author_id: number): SolutionFacts => ({
      id,
      question_id,
      author_id,
      live: true,
      time: id * 1000,
      rating: null,
      rating_count: 0,
      upvotes: id,
      accepted_at: null,
    });
    const answers = (question: number) => expertise.answersOn(question).sort((a, b) => a.time - b.time);
    const s = [solution(1, 10, 100), solution(2, 10, 101), solution(3, 11, 102), solution(4, 10, 103)];
    for (const x of s) expertise.applySolution(['malt'], x, 1);
    expertise.applySolution(['malt'], s[1]!, -1);
    expertise.applySolution(['malt'], solution(5, 11, 104), 1);
    expect(answers(10)).toEqual([1, 4].map((i) => ({ author_id: s[i - 1]!.author_id, time: i * 1000, value: solutionValue(s[i - 1]!) })));
    expect(answers(11).map((a) => a.author_id)).toEqual([102, 104]);
    for (const id of [1, 4]) expertise.applySolution(['malt'], s[id - 1]!, -1);
    expect(answers(10)).toEqual([]);
    expect(answers(11).map((a) => a.author_id)).toEqual([102, 104]);
  });
});

describe('what a caller may not read (a closed knowledge space they are not a member of)', () => {
  const solution = (id: number, question_id: number, author_id: number, accepted = false): SolutionFacts => ({
    id,
    question_id,
    author_id,
    live: true,
    time: id * 86_400_000,
    rating: null,
    rating_count: 0,
    upvotes: 0,
    accepted_at: accepted ? id * 86_400_000 : null,
  });

  test("expertise without the hidden spaces: each record on a tag, a user's totals and the answers counted lose their part", () => {
    const expertise = new Expertise();
    const open = { id: 1, tags: ['Malt'], space: null, live: true, solutions: [solution(1, 1, 100)], recipients: [] };
    const closed = [
      { id: 2, tags: ['malt'], space: 5, live: true, solutions: [solution(2, 2, 100, true), solution(3, 2, 101)], recipients: [102] },
      { id: 3, tags: ['malt', 'hops'], space: 5, live: true, solutions: [solution(4, 3, 100)], recipients: [] },
    ];
    for (const facts of [open, ...closed]) expertise.apply(facts, 1);
    const read = (hidden?: ReadonlySet<number>) => {
      const users = expertise.tagUsers('malt', hidden);
      const records: Record<number, { count: number; recommendations: number; value: number }> = {};
      users.forEach((user, r) => {
        records[user] = { ...r };
      });
      return { answers: users.answers, records, has: [100, 101, 102].filter((u) => users.has(u)) };
    };
    const everything = read();
    expect(everything).toMatchObject({ answers: 4, has: [100, 101, 102] });
    expect(everything.records[100]!.count).toBe(3);
    expect(everything.records[102]).toMatchObject({ count: 0, recommendations: 1 });
    const outside = read(new Set([5]));
    expect(outside).toMatchObject({ answers: 1, has: [100] });
    expect(Object.keys(outside.records)).toEqual(['100']);
    expect(outside.records[100]).toMatchObject({ count: 1, recommendations: 0 });
    expect(outside.records[100]!.value).toBeCloseTo(solutionValue(solution(1, 1, 100)) * timeWeight(86_400_000), 9);
    // Another space hidden takes nothing away.
    expect(read(new Set([6]))).toEqual(everything);
    expect(expertise.user(100)).toMatchObject({ answers: 3, accepted: 1 });
    const user = expertise.user(100, new Set([5]))!;
    expect(user).toMatchObject({ answers: 1, accepted: 0 });
    expect([...user.times]).toEqual([86_400_000]);
    expect(expertise.user(101, new Set([5]))).toBeUndefined();
    expect(expertise.answersOutside(new Set([5]))).toBe(1);
    expect(expertise.answersOutside()).toBe(4);
    // Taken back, a space's questions leave nothing behind.
    for (const facts of closed) expertise.apply(facts, -1);
    expect(read(new Set([5]))).toEqual(read());
    expect(expertise.user(100, new Set([5]))).toEqual(expertise.user(100));
  });

  test('a tag is hidden from a caller only while every question that carries it is in their hidden spaces', () => {
    const uses = new TagUses();
    uses.apply(['Kveik', 'hops', 'kveik'], 5, 1);
    uses.apply(['hops'], null, 1);
    expect(uses.onlyIn('kveik', new Set([5]))).toBe(true);
    expect(uses.onlyIn('kveik', new Set())).toBe(false);
    expect(uses.onlyIn('hops', new Set([5]))).toBe(false);
    // A tag no question carries is everyone's.
    expect(uses.onlyIn('malt', new Set([5]))).toBe(false);
    uses.apply(['kveik'], 6, 1);
    expect(uses.onlyIn('kveik', new Set([5]))).toBe(false);
    expect(uses.onlyIn('kveik', new Set([5, 6]))).toBe(true);
    uses.apply(['hops'], null, -1);
    expect(uses.onlyIn('hops', new Set([5]))).toBe(true);
  });
});

describe('SearchStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kn-search-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const q = (id: number, title: string, fields: Partial<IndexedQuestion> = {}): IndexedQuestion => ({
    id,
    author_id: 7,
    language: 'en',
    title,
    description: '',
    tags: [],
    category_id: null,
    knowledge_space_id: null,
    is_published: true,
    is_deleted: false,
    published: null,
    ...fields,
  });
  const search = (store: SearchStore, query: string, operator: 'AND' | 'OR' = 'OR') =>
    matchQuestions(store, {
      query,
      operator,
      fields: ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'],
      stop_languages: ['en'],
      filter: { tag_operator: 'AND', include_uncategorized: false, include_deleted: false },
      offset: 0,
      limit: 10,
    });

  test('system users and the spaces each tag is used in are kept in the file and follow committed changes only', () => {
    const path = join(dir, 'index.sqlite');
    let store = new SearchStore(path);
    const lab = new Set([5]);
    store.transaction(() => {
      store.upsertQuestion(q(1, 'Kveik at a high temperature', { tags: ['Kveik'], knowledge_space_id: 5 }));
      // A draft is a use of its tags too.
      store.upsertQuestion(q(2, 'A draft about hops', { tags: ['hops'], knowledge_space_id: 5, is_published: false }));
      store.setUserSystem(9, true);
    });
    expect(store.tagUses.onlyIn('kveik', lab)).toBe(true);
    expect(store.tagUses.onlyIn('hops', lab)).toBe(true);
    store.close();
    store = new SearchStore(path);
    expect(store.systemUsers.has(9)).toBe(true);
    expect(store.tagUses.onlyIn('kveik', lab)).toBe(true);
    store.transaction(() => store.upsertQuestion(q(1, 'Kveik at a high temperature', { tags: ['Kveik'], knowledge_space_id: null })));
    expect(store.tagUses.onlyIn('kveik', lab)).toBe(false);
    expect(() =>
      store.transaction(() => {
        store.upsertQuestion(q(2, 'A draft about hops', { tags: ['hops'], is_published: false }));
        store.setUserSystem(9, false);
        throw new Error('not applied');
      }),
    ).toThrow('not applied');
    expect(store.tagUses.onlyIn('hops', lab)).toBe(true);
    expect(store.systemUsers.has(9)).toBe(true);
    store.transaction(() => store.setUserSystem(9, false));
    expect(store.systemUsers.has(9)).toBe(false);
    store.close();
  });

  test('the in-memory index is rebuilt from the file at open and follows committed changes only', () => {
    const path = join(dir, 'index.sqlite');
    let store = new SearchStore(path);
    store.transaction(() => {
      store.upsertQuestion(q(1, 'When should I add hops to the boil?', { tags: ['Hops'] }));
      store.upsertQuestion(q(2, 'Which yeast for a lager?'));
      store.setPart('solution', 10, 2, 8, 'Use a clean lager yeast and ferment cold.');
      store.upsertQuestion(q(3, 'A draft about hops', { is_published: false }));
    });
    expect(search(store, 'hops').items.map((i) => i.id)).toEqual([1]);
    expect(search(store, 'ferment').items.map((i) => i.id)).toEqual([2]);
    expect(() =>
      store.transaction(() => {
        store.upsertQuestion(q(4, 'Rolled back question about hops'));
        throw new Error('fails');
      }),
    ).toThrow('fails');
    expect(search(store, 'hops').items.map((i) => i.id)).toEqual([1]);
    store.close();

    store = new SearchStore(path);
    expect(store.documentCount).toBe(2);
    expect(search(store, 'hops').items.map((i) => i.id)).toEqual([1]);
    expect(store.index.tags.get('hops')).toEqual({ label: 'Hops', count: 1 });
    expect(search(store, 'lager yeast', 'AND').items[0]!.id).toBe(2);
    expect(autocomplete(store, 'which ye', 4)).toEqual({ total: 1, items: ['Which yeast for a lager?'] });
    store.transaction(() => store.upsertQuestion(q(1, 'When should I add hops to the boil?', { is_deleted: true })));
    expect(search(store, 'hops').items).toEqual([]);
    store.close();
  });

  test('topic vectors: questions that say the same in other words are close, whatever order they came in; new ones get theirs', async () => {
    // "emulator" and "simulator" never meet in one question, but both go with circuits and qubits.
    const corpus = [
      ...Array.from({ length: 12 }, (_, i) =>
        q(10 + i, `Fast simulator for circuits ${i}`, { description: 'qubits gates simulator noise' }),
      ),
      ...Array.from({ length: 12 }, (_, i) =>
        q(30 + i, `Which emulator for circuits ${i}`, { description: 'qubits gates emulator depth' }),
      ),
      ...Array.from({ length: 12 }, (_, i) => q(50 + i, `Priming sugar for bottles ${i}`, { description: 'carbonation of bottled beer' })),
    ];
    const load = (name: string, questions: IndexedQuestion[]) => {
      const store = new SearchStore(join(dir, name));
      store.transaction(() => {
        for (const question of questions) store.upsertQuestion(question);
      });
      return store;
    };
    const stores = [load('a.sqlite', corpus), load('b.sqlite', [...corpus].reverse())];
    const closeness = async (store: SearchStore) => {
      await store.refreshTopics();
      const topics = store.topics!;
      const asked = textVector(store.index, 'simulator');
      const v = topics.vectorOf(asked.ids, asked.weights)!;
      const of = (id: number) => topics.cosine(v, store.index.slotOf(id));
      return { emulator: of(30), simulator: of(10), sugar: of(50) };
    };
    const [a, b] = [await closeness(stores[0]!), await closeness(stores[1]!)];
    expect(a.simulator).toBeGreaterThan(0.5);
    expect(a.emulator).toBeGreaterThan(a.sugar + 0.3);
    for (const key of ['emulator', 'simulator', 'sugar'] as const) expect(b[key]).toBeCloseTo(a[key], 2);
    // Published after the training: its vector comes from the words' vectors as they are.
    const store = stores[0]!;
    store.transaction(() => store.upsertQuestion(q(99, 'An emulator of circuits', { description: 'qubits' })));
    const asked = textVector(store.index, 'simulator');
    expect(store.topics!.cosine(store.topics!.vectorOf(asked.ids, asked.weights)!, store.index.slotOf(99))).toBeGreaterThan(a.sugar + 0.3);
    // Not due again until the network has grown: the same model stays.
    const model = store.topics;
    await store.refreshTopics();
    expect(store.topics).toBe(model);
    expect(store.topicStatus()).toEqual({ trained_on: corpus.length, training: false });
    // Grown by a quarter: trained again (a training this short ends before its first pause).
    store.transaction(() => {
      for (let i = 0; i < 12; i++) store.upsertQuestion(q(200 + i, `Circuits emulator question ${i}`));
    });
    expect(store.topicStatus().training).toBe(true);
    await store.refreshTopics();
    expect(store.topicStatus()).toEqual({ trained_on: corpus.length + 13, training: false });
    // Grown by a quarter again while many events wait to be applied (an import): trained once they are.
    store.transaction(() => {
      for (let i = 0; i < 13; i++) store.upsertQuestion(q(300 + i, `Circuits simulator question ${i}`));
    });
    await store.refreshTopics(1000);
    expect(store.topicStatus()).toEqual({ trained_on: corpus.length + 13, training: false });
    await store.refreshTopics(0);
    expect(store.topicStatus()).toEqual({ trained_on: corpus.length + 26, training: false });
    for (const s of stores) s.close();
  });

  /**
   * A store of 3,000 questions made of the vocabulary's words, the i-th in about `chance[i]` of the
   * titles, with descriptions of very different lengths, tags, languages, categories, deleted
   * questions and solutions; and random query requests of its words (`extra`: a word a tenth of
   * the queries add).
   */
  function rankingCorpus(vocabulary: string[], chance: number[], extra: string) {
    let seed = 42;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const some = (scale: number) => vocabulary.filter((_, i) => random() < chance[i]! * scale).join(' ');
    const store = new SearchStore(join(dir, 'index.sqlite'));
    store.transaction(() => {
      for (let id = 1; id <= 3_000; id++) {
        store.upsertQuestion(
          q(id, some(1) || vocabulary.at(-1)!, {
            // Words said once or again, in descriptions of very different lengths: scores spread out.
            description: `${some(2)} ${some(1)} ${'xylophone '.repeat(Math.floor(random() * 40))}`,
            tags: random() < 0.3 ? ['Kegs'] : [],
            language: random() < 0.2 ? 'de' : 'en',
            category_id: random() < 0.5 ? 3 : null,
            is_deleted: random() < 0.05,
            // Few distinct times: equal scores are ordered by time, then id.
            published: new Date(Date.UTC(2026, 0, 1 + Math.floor(random() * 5))).toISOString(),
          }),
        );
        if (random() < 0.3) store.setPart('solution', id, id, 8, some(1.5));
      }
    });
    const request = (words: string[]) => {
      if (random() < 0.1) words.push(extra);
      return {
        query: words.join(' ') || vocabulary[0]!,
        operator: random() < 0.3 ? ('AND' as const) : ('OR' as const),
        fields:
          random() < 0.7 ? [...SearchFieldNames] : random() < 0.5 ? ['title' as const] : ['description' as const, 'solutions' as const],
        stop_languages: ['en'],
        filter: {
          tag_operator: 'AND' as const,
          include_uncategorized: false,
          include_deleted: random() < 0.2,
          ...(random() < 0.2 ? { languages: ['de'] } : {}),
          ...(random() < 0.1 ? { tags: ['kegs'] } : {}),
          ...(random() < 0.1 ? { categories: [3] } : {}),
        },
        offset: random() < 0.2 ? 990 : 0,
        limit: random() < 0.5 ? 10 : 100,
      };
    };
    return { store, random, request };
  }

  test('whole words ranked question at a time (skipping what cannot reach the window) give what scoring every posting gives', () => {
    // Words with no other forms in the index (no shared stems, none begins another, none a typo of
    // another), of very different frequencies.
    const vocabulary = ['amber', 'barley', 'cider', 'dunkel', 'ester', 'fining', 'gravity', 'kettle', 'lupulin', 'mash'];
    const chance = [0.6, 0.45, 0.3, 0.2, 0.12, 0.08, 0.05, 0.03, 0.02, 0.01];
    const { store, random, request: requestOf } = rankingCorpus(vocabulary, chance, 'qwxyz');
    let capped = 0;
    for (let n = 0; n < 300; n++) {
      const words = vocabulary.filter(() => random() < 0.25);
      const request = requestOf(words);
      const skipping = matchQuestions(store, request);
      expect(skipping.words.every((w) => !w.forms.length)).toBe(true);
      expect({ request, ...skipping }).toEqual({ request, ...matchQuestions(store, request, { atATimeWords: 0 }) });
      if (skipping.total === 1000) capped++;
      // The index's own ranking with a small heap (the floor rises early, so more is skipped)
      // against every posting scored.
      const { index } = store;
      const asked = words.map((w) => ({ id: index.termId(w), idf: 0.2 + random() * 2 }));
      const k = 1 + Math.floor(random() * 30);
      const and = request.operator === 'AND';
      const accept = (slot: number) => !index.isDeleted(slot) || request.filter.include_deleted;
      const heap = index.slotHeap(k);
      index.bestOfWords(asked, all, and, (slot, score) => {
        if (accept(slot) && heap.admits(score, slot)) heap.push(score, slot);
        return heap.floor;
      });
      const acc = new Accumulator();
      acc.reset(index.slotCount);
      asked.forEach(({ id, idf }, i) => {
        if (id >= 0) index.scoreTerm(id, idf, all, 1 << i, acc);
      });
      for (let i = 0; i < acc.size; i++) {
        const slot = acc.touched[i]!;
        if (and && acc.exact[slot] !== 2 ** asked.length - 1) acc.score[slot] = -1;
      }
      expect({ words, and, k, best: heap.sorted() }).toEqual({ words, and, k, best: topSlots(index, acc, k, accept) });
    }
    // Enough queries had more matches than the window for the skipping to have mattered.
    expect(capped).toBeGreaterThan(50);
    store.close();
  });

  test('rare words with other forms, ranked question at a time beside common words, give what scoring every posting gives', () => {
    // Common words; rare words with words of the same stem (brewers/brewer), words they begin
    // (hopp: hopping, hoppy), typos a query makes (fermentaton); and a query word only its forms
    // have (sparg: sparging).
    const vocabulary = ['amber', 'barley', 'cider', 'dunkel', 'brewer', 'brewers', 'hopping', 'hoppy', 'fermentation', 'sparging', 'mash'];
    const chance = [0.6, 0.45, 0.3, 0.2, 0.04, 0.03, 0.02, 0.2, 0.1, 0.03, 0.01];
    const { store, random, request: requestOf } = rankingCorpus(vocabulary, chance, 'fermentaton');
    const queried = [...vocabulary, 'hopp', 'sparg', 'brewing'];
    let withForms = 0;
    let capped = 0;
    for (let n = 0; n < 400; n++) {
      const request = requestOf(queried.filter(() => random() < 0.25));
      const skipping = matchQuestions(store, request);
      if (skipping.words.some((w) => w.forms.length)) withForms++;
      expect({ request, ...skipping }).toEqual({ request, ...matchQuestions(store, request, { atATimeWords: 0 }) });
      if (skipping.total === 1000) capped++;
    }
    // Most queries had a word with other forms, and enough filled the window for the skipping to have mattered.
    expect(withForms).toBeGreaterThan(200);
    expect(capped).toBeGreaterThan(30);
    store.close();
  });

  test('similar questions: the closest topic first, the question itself never', () => {
    const store = new SearchStore(join(dir, 'index.sqlite'));
    store.transaction(() => {
      store.upsertQuestion(q(1, 'Sulfur smell from lager yeast fermentation', { description: 'cold fermentation of lager' }));
      store.upsertQuestion(q(2, 'Lager fermentation smells of sulfur', { description: 'my lager yeast at cold temperature' }));
      store.upsertQuestion(q(3, 'How much priming sugar for bottling?', { description: 'bottles are flat' }));
    });
    const similar = similarTo(store, { question_id: 1 }, 10);
    expect(similar.map((s) => s.id)).toEqual([2]);
    expect(similar[0]!.score).toBeGreaterThan(0.3);
    expect(similar[0]!.score).toBeLessThanOrEqual(1);
    store.close();
  });
});
