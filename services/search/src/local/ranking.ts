import { bm25Idf } from '../domain/ranking.ts';
import type { Accumulator, FieldWeights, TermIndex } from './postings.ts';

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
  // Most slots fall below the floor: compared here, their score is not boxed for a call to
  // `admits`, which V8's middle tier (where a function run once per search stays) does not inline.
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
