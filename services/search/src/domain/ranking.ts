import type { Accumulator, FieldWeights, TermIndex } from '../local/postings.ts';

/** FTS5's inverse document frequency (the one its bm25() uses; kept so the calibration carries over). */
export function bm25Idf(documents: number, frequency: number): number {
  const value = Math.log((documents - frequency + 0.5) / (frequency + 0.5));
  return value > 0 ? value : 1e-6;
}

/**
 * Similar-question search's idf of a word in `unitFrequency` of `documents` units (TermIndex.unitIdf),
 * also the one of a word among what was asked (the expert model's neighbours, on either backend).
 */
export const unitIdf = (documents: number, unitFrequency: number) => Math.log((documents + 1) / (unitFrequency + 0.5));

/**
 * The `k` best slots an accumulator touched, by their score (negative: not a match), best first
 * (ties: the newer question, then the higher id, first), among those `keep` accepts; `keep` is
 * asked only of slots that would enter.
 */
export function topSlots(
  index: TermIndex,
  acc: Accumulator,
  k: number,
  keep: (slot: number) => boolean,
): Array<{ slot: number; score: number }> {
  const heap = index.slotHeap(k);
  const { score, touched } = acc;
  // Most slots fall below the floor; compared here, their score is not handed to a call. V8's
  // middle tier (Maglev), where a caller run once per search stays, inlined this loop but not
  // admits, and boxed the score for the call: a 16-byte number per slot, half of what an expert
  // search allocated (32,000 candidates' slots, 500 KiB).
  let floor = heap.floor;
  for (let i = 0; i < acc.size; i++) {
    const slot = touched[i]!;
    const s = score[slot]!;
    if (s < 0 || s < floor) continue;
    if (heap.admits(s, slot) && keep(slot)) {
      heap.push(s, slot);
      floor = heap.floor;
    }
  }
  return heap.sorted();
}

/**
 * Scores a phrase that several words make up (a prefix: the words it begins) as FTS5 scores
 * `"hop"*`: BM25 of the words' summed frequencies, with the phrase's own document frequency plus
 * `counted` (the questions of forms scored before: a word of the same stem is never rarer, so never
 * worth more, than the word itself). Calls `add` with the score of each question that has one of
 * the words; returns how many those are.
 */
export function scorePhrase(
  index: TermIndex,
  words: readonly number[],
  weights: FieldWeights,
  add: (slot: number, score: number) => void,
  counted = 0,
): number {
  // Read once at idf 1, then scaled: the phrase's idf needs its count, which is how many it reads
  // (counting first read a short prefix's thousands of lists twice). `questions` serves ranking only.
  const phrase = index.scoredWord([words], weights, [{ idf: 1, weight: 1 }], 0);
  phrase.fill(Number.POSITIVE_INFINITY);
  const idf = phraseIdf(index, counted + phrase.size);
  for (let e = 0; e < phrase.size; e++) add(phrase.slots[e]!, idf * phrase.adds[e]!);
  return phrase.size;
}

/** The idf of a phrase (scorePhrase) in this many questions, with those of the forms counted before it. */
export const phraseIdf = (index: TermIndex, questions: number) => bm25Idf(index.count, Math.min(index.count, questions));

/**
 * The `k` best items by `compare` (positive: a is better than b), best first: a heap of k, not a
 * sort of all (expert search picks a hundred of thousands).
 */
export function topK<T>(items: Iterable<T>, compare: (a: T, b: T) => number, k: number): T[] {
  const heap: T[] = [];
  // The heap's root is its worst item.
  const worse = (a: T, b: T) => compare(a, b) < 0;
  const swap = (x: number, y: number) => {
    const t = heap[x]!;
    heap[x] = heap[y]!;
    heap[y] = t;
  };
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let least = at;
      if (l < heap.length && worse(heap[l]!, heap[least]!)) least = l;
      if (r < heap.length && worse(heap[r]!, heap[least]!)) least = r;
      if (least === at) return;
      swap(at, least);
      at = least;
    }
  };
  if (k <= 0) return [];
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      for (let at = heap.length - 1; at > 0; ) {
        const parent = (at - 1) >> 1;
        if (!worse(heap[at]!, heap[parent]!)) break;
        swap(at, parent);
        at = parent;
      }
    } else if (worse(heap[0]!, item)) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort((a, b) => compare(b, a));
}
