import { type SearchField, SearchFieldNames } from '@kn/contracts';
import type { Language } from '@kn/similarity';
import { grow } from '../core/typed-arrays.ts';
import { editDistance, stemLanguageOf, TYPO_PREFIX, wordStem } from '../core/words.ts';
import { askedFieldWeights, unitFieldWeights } from '../domain/fields.ts';
import { unitIdf } from '../domain/ranking.ts';
import { ListArena } from './list-arena.ts';
import { SlotHeap } from './slot-heap.ts';
import { SlotRuns } from './slot-runs.ts';
import { Vocabulary } from './vocabulary.ts';

/**
 * The in-memory inverted index of one search instance: for every word, the questions it occurs in
 * with its frequency in each field. Ranking reads it word by word into score accumulators (far
 * cheaper per posting than SQLite FTS5's bm25(), which scores through SQL), so a query scores
 * every match exactly, even a word that is in most questions; or, for whole words, question at a
 * time, skipping the postings that cannot change the best (bestOfWords).
 *
 * A question is given as its word ids with their per-field frequencies (`Forward`); the index keeps
 * each word's postings in slot order, in blocks that many words share (list-arena.ts). The list per
 * question (to undo it, and for similarity and highlighting) is read from `readWords` when one is
 * given (the store: its SQLite file holds every question's list anyway, and a second copy in memory
 * would be as large as the postings themselves); a TermIndex on its own keeps the lists in memory.
 * When a question changes, its old postings are marked dead in place (found by binary search) and
 * dropped when more than half of a word's postings are dead. The index is rebuilt from the store's
 * rows at start; it is never the source of anything.
 */

/** Fields in the order of SearchFieldNames. */
export const FIELDS = SearchFieldNames;

/**
 * Bits of each field's frequency in one packed 32-bit number (FIELDS order: title up to 15,
 * description 63, tags 7, solutions 255, comments 63, attachments 31; more counts as the most).
 * BM25 saturates long before these, and one number per word and question keeps a question's
 * words at 8 bytes a word and the postings' codes of counts (CountCodes) few. `weighted` and
 * `askedCosine` read the same layout by hand.
 */
const FIELD_BITS = [4, 6, 3, 8, 6, 5] as const satisfies { length: (typeof FIELDS)['length'] };
const FIELD_SHIFTS = FIELD_BITS.map((_, i) => FIELD_BITS.slice(0, i).reduce((a, b) => a + b, 0));

/**
 * The words of one question as stored and kept: per word its id, then its frequencies in the
 * fields (packCounts), 8 bytes a word.
 */
export type Forward = Int32Array;
export const FORWARD_STRIDE = 2;

/** Longest question length (in words) BM25's length normalisation tells apart. */
const MAX_LENGTH = 0xffff;

/** Packs per-field counts (in FIELDS order) into the number of a Forward entry (0: in no field). */
export function packCounts(counts: ArrayLike<number>): number {
  const c = (i: number, max: number) => Math.min(max, counts[i] ?? 0);
  // FIELD_BITS' layout, by hand: this runs for every word of every question indexed.
  return c(0, 15) | (c(1, 63) << 4) | (c(2, 7) << 10) | (c(3, 255) << 13) | (c(4, 63) << 21) | (c(5, 31) << 27);
}

export function unpackCounts(packed: number): number[] {
  return FIELD_BITS.map((bits, i) => (packed >>> FIELD_SHIFTS[i]!) & ((1 << bits) - 1));
}

/** The frequencies of title, description and tags (what was asked) of a packed entry. */
export function askedCounts(packed: number): [number, number, number] {
  return [packed & 15, (packed >>> 4) & 63, (packed >>> 10) & 7];
}

/** Per-field weights in FIELDS order (0 leaves a field out). */
export type FieldWeights = Float64Array;

export function fieldWeights(weights: Partial<Record<SearchField, number>>): FieldWeights {
  return Float64Array.from(FIELDS, (f) => weights[f] ?? 0);
}

const askedWeights = fieldWeights(askedFieldWeights);

/** The weighted frequency of a packed entry (FIELD_BITS' layout). */
const weighted = (p: number, w: FieldWeights) =>
  w[0]! * (p & 15) +
  w[1]! * ((p >>> 4) & 63) +
  w[2]! * ((p >>> 10) & 7) +
  w[3]! * ((p >>> 13) & 255) +
  w[4]! * ((p >>> 21) & 63) +
  w[5]! * (p >>> 27);

/** What the filters of a search look at. */
export interface Facets {
  author_id: number;
  language: string;
  category_id: number | null;
  knowledge_space_id: number | null;
  is_deleted: boolean;
  /** As written; matched lower-case. */
  tags: readonly string[];
  /** When it was published (ms; 0: not known): equal scores put the newer question first. */
  time: number;
}

/**
 * Posting layout, in cells of 16 bits: the slot's low and high half, the code of its packed counts
 * (CountCodes; 0: dead). A word's postings are in slot order, so a question's posting is found by
 * binary search and a dead one keeps its place until compaction. 6 bytes a posting: postings are
 * most of the index's memory.
 */
const STRIDE = 3;
const slotAt = (list: Uint16Array, at: number) => list[at]! | (list[at + 1]! << 16);
const EMPTY_LIST = new Uint16Array(0);
const NO_SLOT = 0x7fffffff;
/** A bound is lifted by this hair, so that rounding (sums in another order) never makes it too low. */
const ROUNDING = 1 + 1e-9;
/**
 * A question's length class (16 to a doubling, up to 255) and the shortest length of each class:
 * one byte a question that question-at-a-time ranking reads instead of the length itself, which it
 * reads only for the few candidates that can still reach the floor (bestOfWords).
 */
const lengthClass = (length: number) => Math.min(255, Math.floor(16 * Math.log2(1 + Math.min(length, MAX_LENGTH))));
const CLASS_LENGTHS = new Float64Array(256).fill(MAX_LENGTH);
for (let l = MAX_LENGTH; l >= 0; l--) CLASS_LENGTHS[lengthClass(l)] = l;

/**
 * One word's BM25 in one question: top · f / (f + base + lengthFactor · length), top = idf · (k1 + 1).
 * The one place it is written: question at a time and the accumulators must add identical numbers.
 */
const termScore = (top: number, f: number, base: number, lengthFactor: number, length: number) =>
  (top * f) / (f + base + lengthFactor * Math.min(length, MAX_LENGTH));

/** The first posting of a list from `from` on (a cell offset) whose slot is at least `slot`: galloping, then binary search. */
function seek(list: Uint16Array, from: number, slot: number): number {
  // In postings, not cells: the middle of a range is then a shift.
  const end = list.length / STRIDE;
  let low = from / STRIDE;
  let high = low;
  for (let step = 1; high < end && slotAt(list, high * STRIDE) < slot; step *= 2) {
    low = high + 1;
    high += step;
  }
  if (high > end) high = end;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (slotAt(list, mid * STRIDE) < slot) low = mid + 1;
    else high = mid;
  }
  return low * STRIDE;
}

/** The first of the first `end` entries of slots from `from` on that is at least `slot`: galloping, then binary search. */
function seekSlot(slots: Int32Array, end: number, from: number, slot: number): number {
  let low = from;
  let high = from;
  for (let step = 1; high < end && slots[high]! < slot; step *= 2) {
    low = high + 1;
    high += step;
  }
  if (high > end) high = end;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (slots[mid]! < slot) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * What a phrase adds to a question that has it as the first of a word's phrases: with `weight`
 * null the word's own BM25 at `idf` (wordScore), else weight · idf · the saturation of the phrase's
 * summed frequency (a form, scored as FTS5 scores `"hop"*`).
 */
export interface PhraseScale {
  idf: number;
  weight: number | null;
}

/**
 * A word with other forms is read this many slots at a time (ScoredWord.fill), times one for every
 * 16 of its words' lists: each list is looked at once a chunk (a short prefix has thousands).
 */
const CHUNK = 1024;
/** phraseCounts keeps up to this many answers, each of phrases of up to KEPT_PHRASE_WORDS words (a short prefix's thousands would make keys of kilobytes). */
const KEPT_PHRASE_COUNTS = 4096;
const KEPT_PHRASE_WORDS = 64;
// One chunk's sums, all zero between chunks: 1 + the first phrase a slot has, that phrase's sum,
// and a bit for each slot claimed. A read of all the questions at once takes the index's size.
let chunkClaims = new Uint8Array(CHUNK);
let chunkSums = new Float64Array(CHUNK);
let chunkBits = new Int32Array(CHUNK / 32);

/**
 * A query word with its other forms (a rare word; match.ts scoredWord), as phrases in their order
 * (the word itself, then its forms): the questions that have any, in slot order, what the word
 * adds to each (the scale of the first phrase the question has, at that phrase's summed weighted
 * frequency, added in the words' order), and whether that phrase is the word itself.
 * Read a chunk of slots at a time, as far as the ranking asks (`fill`), so that phrases that can
 * no longer matter are never read: once the ranking's floor leaves no room for what the remaining
 * phrases add at most, their questions are left out from there on. A common form (`example` for
 * `exam`) has thousands of questions, none of which can reach the floor once the first thousand
 * matches are in.
 */
export class ScoredWord {
  /** The entries read so far (`size` of them), in slot order. */
  slots = new Int32Array(256);
  adds = new Float64Array(256);
  whole = new Uint8Array(256);
  size = 0;
  /** Every question before this slot has been read (NO_SLOT: all of them). */
  reached = 0;
  /** The most the word adds to a question (an upper bound: the forms' scales at saturation). */
  readonly most: number;
  /** The most each phrase and those after it add. */
  private readonly later: Float64Array;
  /** How many questions have a phrase, summed over the phrases: 0 when none has any. */
  readonly questions: number;
  /** The phrases still read: those before this one. */
  private active: number;
  private readonly index: TermIndex;
  /** Each phrase's words' lists, and where each is read to. */
  private readonly lists: ReadonlyArray<readonly Uint16Array[]>;
  private readonly at: Int32Array[];
  private readonly frequencies: Float64Array;
  private readonly scales: readonly PhraseScale[];
  private readonly chunk: number;

  constructor(
    index: TermIndex,
    lists: ReadonlyArray<readonly Uint16Array[]>,
    frequencies: Float64Array,
    scales: readonly PhraseScale[],
    questions: number,
    k1 = 1.2,
  ) {
    this.index = index;
    this.lists = lists;
    this.frequencies = frequencies;
    this.scales = scales;
    this.questions = questions;
    this.at = lists.map((phrase) => new Int32Array(phrase.length));
    this.chunk = CHUNK * Math.max(1, Math.ceil(lists.reduce((n, phrase) => n + phrase.length, 0) / 16));
    const mosts = lists.map((words, p) => {
      const scale = scales[p]!;
      if (!words.length) return 0;
      if (scale.weight !== null || words.length > 1) return (scale.weight ?? 1) * scale.idf * (k1 + 1);
      // The word itself: a rare word, whose few postings give its most exactly (a tighter bound
      // lets the other words' lists stop bringing candidates sooner).
      const list = words[0]!;
      let most = 0;
      for (let q = 0; q < list.length; q += STRIDE) {
        const f = frequencies[list[q + 2]!]!;
        if (f > 0) most = Math.max(most, index.wordScore(slotAt(list, q), scale.idf, f));
      }
      return most;
    });
    this.later = new Float64Array(mosts.length);
    for (let p = mosts.length - 1, most = 0; p >= 0; p--) this.later[p] = most = Math.max(most, mosts[p]!);
    this.most = this.later[0] ?? 0;
    this.active = lists.length;
  }

  /**
   * Reads on until the questions before `slot` are read (or all of them), leaving out from now on
   * the last phrases while what they add at most stays under `needed` (which never falls).
   */
  fill(slot: number, needed = Number.NEGATIVE_INFINITY) {
    while (this.active > 0 && this.later[this.active - 1]! * ROUNDING < needed) this.active--;
    // Asked for all of them (scoring every posting), in one chunk.
    const chunk = slot >= NO_SLOT ? Math.max(this.chunk, this.index.slotCount) : this.chunk;
    while (this.reached !== NO_SLOT && this.reached <= slot) this.readChunk(chunk);
  }

  /** Whether entry `p` is read, reading on a chunk at a time as far as needed. */
  has(p: number, needed: number) {
    while (p >= this.size && this.reached !== NO_SLOT) this.fill(this.reached, needed);
    return p < this.size;
  }

  private readChunk(chunk: number) {
    const { lists, at, frequencies } = this;
    if (chunkClaims.length < chunk) {
      const room = 32 * Math.ceil(chunk / 32);
      chunkClaims = new Uint8Array(room);
      chunkSums = new Float64Array(room);
      chunkBits = new Int32Array(room / 32);
    }
    // From the next question any phrase still read has.
    let start = NO_SLOT;
    for (let p = 0; p < this.active; p++)
      lists[p]!.forEach((list, l) => {
        if (at[p]![l]! < list.length) start = Math.min(start, slotAt(list, at[p]![l]!));
      });
    if (start === NO_SLOT) {
      this.reached = NO_SLOT;
      return;
    }
    const end = start + chunk;
    let claimed = 0;
    for (let p = 0; p < this.active; p++) {
      const mark = p + 1;
      const phrase = lists[p]!;
      for (let l = 0; l < phrase.length; l++) {
        const list = phrase[l]!;
        let q = at[p]![l]!;
        for (; q < list.length; q += STRIDE) {
          const slot = slotAt(list, q);
          if (slot >= end) break;
          const f = frequencies[list[q + 2]!]!;
          if (f <= 0) continue;
          const offset = slot - start;
          const claim = chunkClaims[offset]!;
          if (claim === 0) {
            chunkClaims[offset] = mark;
            chunkSums[offset] = f;
            chunkBits[offset >>> 5]! |= 1 << (offset & 31);
            claimed++;
          } else if (claim === mark) chunkSums[offset]! += f;
        }
        at[p]![l] = q;
      }
    }
    if (this.size + claimed > this.slots.length) {
      const room = Math.max(2 * this.slots.length, this.size + claimed);
      const slots = new Int32Array(room);
      const adds = new Float64Array(room);
      const whole = new Uint8Array(room);
      slots.set(this.slots.subarray(0, this.size));
      adds.set(this.adds.subarray(0, this.size));
      whole.set(this.whole.subarray(0, this.size));
      this.slots = slots;
      this.adds = adds;
      this.whole = whole;
    }
    const { index, scales, slots, adds, whole } = this;
    let e = this.size;
    for (let w = 0; e < this.size + claimed; w++) {
      let bits = chunkBits[w]!;
      if (bits === 0) continue;
      chunkBits[w] = 0;
      while (bits !== 0) {
        const lowest = bits & -bits;
        bits ^= lowest;
        const offset = (w << 5) | (31 - Math.clz32(lowest));
        const slot = start + offset;
        const scale = scales[chunkClaims[offset]! - 1]!;
        const f = chunkSums[offset]!;
        chunkClaims[offset] = 0;
        chunkSums[offset] = 0;
        slots[e] = slot;
        if (scale.weight === null) {
          adds[e] = index.wordScore(slot, scale.idf, f);
          whole[e++] = 1;
        } else {
          adds[e] = scale.weight * (scale.idf * index.saturate(slot, f));
          whole[e++] = 0;
        }
      }
    }
    this.size = e;
    this.reached = end;
  }
}

/**
 * The packed counts of the postings as 16-bit codes. Postings repeat few combinations of counts (a
 * few hundred at 100,000 questions: most words occur once or twice in one or two fields), so a
 * code in the posting and one table of what each code means take 2 bytes a posting instead of 4.
 * Code 0 is a dead posting. When all 65,535 codes are taken, a new combination gets the code of
 * the nearest one there is: in the same fields if any (a search restricted to some fields still
 * finds the word where it is), then by the least difference in counts. BM25 saturates long before
 * large counts differ, and a network needs tens of thousands of combinations to get there.
 */
class CountCodes {
  /** What each code means (index: code). */
  packed = new Int32Array(256);
  private size = 1;
  private readonly codes = new Map<number, number>([[0, 0]]);
  private readonly limit: number;

  /** `limit`: how many codes there can be (tests make it small). */
  constructor(limit = 0x10000) {
    this.limit = limit;
  }

  /** The weighted frequencies of the codes there were, by the field weights (their values joined). */
  private readonly weightedTables = new Map<string, { table: Float64Array; codes: number }>();

  /**
   * The weighted frequency of every code under these weights, by code: a word's postings repeat a
   * few hundred codes, so scoring reads one number a posting instead of weighing six fields.
   */
  weightedBy(weights: FieldWeights): Float64Array {
    const key = weights.join();
    const known = this.weightedTables.get(key);
    if (known?.codes === this.size) return known.table;
    // A few field restrictions are asked again and again; any other is computed anew.
    if (!known && this.weightedTables.size >= 64) this.weightedTables.clear();
    const table = new Float64Array(this.size);
    for (let code = 0; code < this.size; code++) table[code] = weighted(this.packed[code]!, weights);
    this.weightedTables.set(key, { table, codes: this.size });
    return table;
  }

  code(packed: number): number {
    const known = this.codes.get(packed);
    if (known !== undefined) return known;
    let code = this.size;
    if (code < this.limit) {
      this.packed = grow(this.packed, code + 1);
      this.packed[code] = packed;
      this.size++;
    } else code = this.nearest(packed);
    this.codes.set(packed, code);
    return code;
  }

  private nearest(packed: number): number {
    const counts = unpackCounts(packed);
    let best = 1;
    let bestDistance = Infinity;
    for (let code = 1; code < this.size; code++) {
      const other = unpackCounts(this.packed[code]!);
      let distance = 0;
      // A field the word is in, or is not in, outweighs any difference of counts (each below 256).
      for (let i = 0; i < counts.length; i++) distance += Math.abs(counts[i]! - other[i]!) + (counts[i]! > 0 !== other[i]! > 0 ? 2048 : 0);
      if (distance < bestDistance) {
        best = code;
        bestDistance = distance;
      }
    }
    return best;
  }
}
/** A word's postings are compacted when more than half are dead (and it has more than COMPACT_MIN). */
const COMPACT_MIN = 16;

/** log(1 + u) of the whole numbers an asked frequency can be (title twice, description, tags). */
const LOG1P = Float64Array.from({ length: 2 * 15 + 63 + 7 + 1 }, (_, u) => Math.log1p(u));

/**
 * Score accumulators over question slots, reused from query to query (one query runs at a time:
 * ranking is synchronous). `mark` tells which slots the current query touched (its epoch), so
 * nothing is cleared between queries.
 */
export class Accumulator {
  score = new Float64Array(1024);
  /** A second score per slot (prefix matches). */
  extra = new Float64Array(1024);
  /** Bit i: query word i matched as a whole word / as a whole word or a prefix. */
  exact = new Uint32Array(1024);
  any = new Uint32Array(1024);
  private mark = new Uint32Array(1024);
  private epoch = 0;
  touched = new Int32Array(1024);
  size = 0;

  reset(slots: number) {
    if (slots > this.mark.length) {
      const n = Math.max(slots, this.mark.length * 2);
      this.score = new Float64Array(n);
      this.extra = new Float64Array(n);
      this.exact = new Uint32Array(n);
      this.any = new Uint32Array(n);
      this.mark = new Uint32Array(n);
      this.touched = new Int32Array(n);
      this.epoch = 0;
    }
    if (++this.epoch === 0xffffffff) {
      this.mark.fill(0);
      this.epoch = 1;
    }
    this.size = 0;
  }

  /** Makes the slot part of this query (zeroed the first time). */
  touch(slot: number) {
    if (this.mark[slot] === this.epoch) return;
    this.mark[slot] = this.epoch;
    this.score[slot] = 0;
    this.extra[slot] = 0;
    this.exact[slot] = 0;
    this.any[slot] = 0;
    this.touched[this.size++] = slot;
  }
}

/**
 * Where a TermIndex built over a store reads a question's words (null: not indexed). The store
 * hands the words a question had to `put` and `remove` itself, since by then its file holds the
 * new ones.
 */
export type ReadWords = (questionId: number) => Forward | null;
/** Reads many questions' words at once (one statement instead of one per question); the indexed ones only. */
export type ReadManyWords = (questionIds: readonly number[]) => Map<number, Forward>;

export interface TermIndexOptions {
  readWords?: ReadWords;
  readManyWords?: ReadManyWords;
  listBlock?: number;
  countCodes?: number;
  unitWeights?: Readonly<Record<SearchField, number>>;
}

export class TermIndex {
  /** Reads a question's words when the index keeps none (see ReadWords). */
  private readonly readWords: ReadWords | null;
  private readonly readManyWords: ReadManyWords | null;
  /** Each slot's words, kept only without `readWords`. */
  private readonly forward: Array<Int32Array | null> = [];
  /**
   * What each slot's question asked: the words of its title, description and tags, each with one
   * small weight (title twice, description, tags: at most 100). Expert search compares a question
   * with a few hundred neighbour candidates by these words alone (askedCosine), without reading each
   * candidate's words from the file. About 35 words a question, 5 bytes a word, against 8 bytes for
   * every word of every field in the file.
   */
  private readonly asked = new SlotRuns({ weighted: true });
  /** Words read ahead for the slots a ranking is about to read (withWordsOf), by slot. */
  private readAhead: Map<number, Forward> | null = null;

  /**
   * `listBlock`: the size of the blocks posting lists share, in 16-bit cells (list-arena.ts);
   * `countCodes`: how many codes of counts there can be (CountCodes); `unitWeights`: the similarity
   * unit's field weights (unitFieldWeights unless a benchmark tries others).
   */
  constructor(options: TermIndexOptions = {}) {
    this.unitWeights = fieldWeights(options.unitWeights ?? unitFieldWeights);
    this.readWords = options.readWords ?? null;
    this.readManyWords = options.readManyWords ?? null;
    this.arena = new ListArena(options.listBlock);
    this.counts = new CountCodes(options.countCodes);
  }

  /** Cells the posting blocks hold, and of them in lists (list-arena.ts). */
  get listUsage() {
    return this.arena.usage;
  }

  /**
   * Runs `work` with the words of these slots read ahead in one go: a ranking that reads a few
   * hundred questions' words (similarity, expert search) pays one statement instead of one per
   * question, and a question read twice in it (feedback ranks the candidates again) is read once.
   */
  withWordsOf<T>(slots: readonly number[], work: () => T): T {
    if (!this.readManyWords) return work();
    const outer = this.readAhead === null;
    const ahead = this.readAhead ?? new Map<number, Forward>();
    this.readAhead = ahead;
    const missing = slots.filter((slot) => !ahead.has(slot) && this.holds(slot));
    if (missing.length)
      for (const [id, words] of this.readManyWords(missing.map((slot) => this.ids[slot]!))) ahead.set(this.slots.get(id)!, words);
    try {
      return work();
    } finally {
      if (outer) this.readAhead = null;
    }
  }

  /** The unit's field weights when the index was made: they are part of what it counts. */
  private readonly unitWeights: FieldWeights;
  private readonly termIds = new Map<string, number>();
  private readonly termTexts: string[] = [];
  /**
   * Words by their stem, per language: a word joins the stem of each language of the questions it
   * occurs in (bit i of stemmed[word]: stemLanguages[i]). Query words look their stem up here, so
   * stems cost a dictionary, not postings. Most stems have one word: that word's id stands alone
   * (no array for it).
   */
  private readonly stems = new Map<Language, Map<string, number | number[]>>();
  private readonly stemLanguages: Language[] = [];
  private stemmed = new Uint8Array(1024);
  /** The words in sorted order, for prefix expansion and typo tolerance. */
  private readonly vocabulary = new Vocabulary();
  /** Where each word's postings are, by its id (list-arena.ts). */
  private readonly arena: ListArena;
  private readonly counts: CountCodes;
  /** Postings per word, dead ones included. */
  private sizes = new Int32Array(1024);
  private dead = new Int32Array(1024);
  /** Questions a word occurs in (in any field). */
  private df = new Int32Array(1024);
  /** Questions a word occurs in as part of their similarity unit (not only in attachments). */
  private unitDf = new Int32Array(1024);
  /** Questions a word occurs in as part of what was asked (title, description, tags). */
  private askedDf = new Int32Array(1024);
  /** log(askedDf + 0.5) per word, computed when first asked after its frequency changed (NaN: stale). */
  private askedLogDfs = new Float64Array(1024).fill(Number.NaN);

  private readonly slots = new Map<number, number>();
  private ids = new Int32Array(1024);
  private lengths = new Uint32Array(1024);
  private lengthClasses = new Uint8Array(1024);
  /** 1: the slot holds an indexed question. */
  private held = new Uint8Array(1024);
  // A slot's facets, in arrays rather than an object each: no object per question on the heap.
  /** Its tags as written, by their ids in tagLabels. */
  private readonly tagRuns = new SlotRuns({ weighted: false });
  private readonly tagLabels: string[] = [];
  private readonly tagIds = new Map<string, number>();
  private languageNames: string[] = [];
  private authorIds = new Int32Array(1024);
  private times = new Float64Array(1024);
  // Facets that filters test on many slots, as small numbers (0: none).
  private languageCodes = new Uint8Array(1024);
  private deletedFlags = new Uint8Array(1024);
  private categoryIds = new Int32Array(1024);
  private spaceIds = new Int32Array(1024);
  private readonly languageCode = new Map<string, number>();
  private totalLength = 0;
  private docs = 0;
  /** Tags in use: lower-case label → the label as written and how many questions carry it. */
  readonly tags = new Map<string, { label: string; count: number }>();
  /**
   * Similarity's idf per word and the length of each question's unit vector, cached: a word's idf
   * is computed again when its unit frequency changed, a question's length when it changed, and
   * all of them when the number of questions has moved by more than 1% (the weights drift that
   * little meanwhile).
   */
  private unitIdfs = new Float64Array(1024);
  private unitIdfFresh = new Uint8Array(1024);
  private unitNorms = new Float64Array(1024);
  private unitNormFresh = new Uint8Array(1024);
  private idfDocuments = -1;
  /** A bit a slot, all clear between calls: the questions phraseCounts has counted. */
  private slotBits = new Int32Array(0);
  /** phraseCounts' answers since the index last changed, by weights and phrases. */
  private readonly phraseCountsKept = new Map<string, readonly number[]>();

  /** Indexed questions. */
  get count() {
    return this.docs;
  }

  /** Slots ever allocated (accumulators must cover them). */
  get slotCount() {
    return this.slots.size;
  }

  get averageLength() {
    return this.docs ? this.totalLength / this.docs : 1;
  }

  /** Word ids known to the index (for sizing per-word buffers). */
  get termCount() {
    return this.termTexts.length;
  }

  termId(term: string): number {
    return this.termIds.get(term) ?? -1;
  }

  term(id: number): string {
    return this.termTexts[id]!;
  }

  /** In how many questions a word occurs (-1: unknown word counts 0). */
  documentFrequency(termId: number): number {
    return termId < 0 ? 0 : this.df[termId]!;
  }

  unitFrequency(termId: number): number {
    return termId < 0 ? 0 : this.unitDf[termId]!;
  }

  /** The idf of a word in similar-question search, log((N + 1) / (unit frequency + 0.5)); unknown words (-1) as if seen nowhere. */
  unitIdf(termId: number): number {
    this.refreshWeights();
    if (termId < 0) return unitIdf(this.idfDocuments, 0);
    if (!this.unitIdfFresh[termId]) {
      this.unitIdfs[termId] = unitIdf(this.idfDocuments, this.unitDf[termId]!);
      this.unitIdfFresh[termId] = 1;
    }
    return this.unitIdfs[termId]!;
  }

  /** In how many questions a word is part of what was asked (-1: unknown word counts 0). */
  askedFrequency(termId: number): number {
    return termId < 0 ? 0 : this.askedDf[termId]!;
  }

  /** log(asked frequency + 0.5): a word's part of its idf among what was asked, cached (the other part, log(N + 1), is the index's). */
  askedLogDf(termId: number): number {
    if (termId < 0) return Math.log(0.5);
    let value = this.askedLogDfs[termId]!;
    if (Number.isNaN(value)) {
      value = Math.log(this.askedDf[termId]! + 0.5);
      this.askedLogDfs[termId] = value;
    }
    return value;
  }

  /** The idf of a word among what was asked, log((N + 1) / (asked frequency + 0.5)); unknown words (-1) as if seen nowhere. */
  askedIdf(termId: number): number {
    return Math.log(this.docs + 1) - this.askedLogDf(termId);
  }

  private refreshWeights() {
    if (Math.abs(this.docs - this.idfDocuments) <= 0.01 * this.idfDocuments) return;
    this.idfDocuments = this.docs;
    if (this.unitIdfFresh.length < this.termTexts.length) {
      this.unitIdfs = new Float64Array(this.termTexts.length * 2);
      this.unitIdfFresh = new Uint8Array(this.termTexts.length * 2);
    } else this.unitIdfFresh.fill(0);
    this.unitNormFresh.fill(0);
  }

  /** Words that begin with `prefix` (2+ characters), itself included, that some question has. */
  expand(prefix: string): number[] {
    if (prefix.length < 2) return [];
    return this.vocabulary.beginning(prefix).filter((id) => this.df[id]! > 0);
  }

  /** Words that share a stem with `term` in a language (in its questions), that some question has. */
  stemVariants(term: string, language: Language): number[] {
    const group = this.stems.get(language)?.get(wordStem(term, language));
    if (group === undefined) return [];
    return (typeof group === 'number' ? [group] : group).filter((id) => this.df[id]! > 0);
  }

  /** Words at most `edits` edits from `term`, with its first letter, that some question has (the term itself included). */
  neighbours(term: string, edits: number): number[] {
    return this.vocabulary.within(term, edits, TYPO_PREFIX, editDistance).filter((id) => this.df[id]! > 0);
  }

  /** Joins each word of a question to its stem in the question's language (once per word and language). */
  private addStems(words: Forward, language: string) {
    const l = stemLanguageOf(language);
    if (!l) return;
    let at = this.stemLanguages.indexOf(l);
    if (at < 0) {
      at = this.stemLanguages.push(l) - 1;
      this.stems.set(l, new Map());
    }
    const bit = 1 << at;
    const groups = this.stems.get(l)!;
    for (let i = 0; i < words.length; i += FORWARD_STRIDE) {
      const id = words[i]!;
      if (this.stemmed[id]! & bit) continue;
      this.stemmed[id]! |= bit;
      const word = this.termTexts[id]!;
      const stem = wordStem(word, l);
      // A stem that is the word itself is kept as the word's string (one string, not two).
      const key = stem === word ? word : stem;
      const group = groups.get(key);
      if (group === undefined) groups.set(key, id);
      else if (typeof group === 'number') groups.set(key, [group, id]);
      else group.push(id);
    }
  }

  slotOf(questionId: number): number {
    return this.slots.get(questionId) ?? -1;
  }

  questionId(slot: number): number {
    return this.ids[slot]!;
  }

  /** Whether a slot holds an indexed question. */
  holds(slot: number): boolean {
    return slot >= 0 && this.held[slot] === 1;
  }

  /** The facets of an indexed question's slot, or null when the slot holds none. */
  facets(slot: number): Facets | null {
    if (!this.holds(slot)) return null;
    return {
      author_id: this.authorIds[slot]!,
      language: this.languageNames[slot]!,
      category_id: this.categoryIds[slot] || null,
      knowledge_space_id: this.spaceIds[slot] || null,
      is_deleted: this.deletedFlags[slot] === 1,
      tags: this.tagsOf(slot),
      time: this.times[slot]!,
    };
  }

  /** The tags of a slot's question as written (none when the slot holds none). */
  tagsOf(slot: number): readonly string[] {
    if (!this.holds(slot)) return [];
    return Array.from(this.tagRuns.of(slot), (id) => this.tagLabels[id]!);
  }

  /** The id of a tag label as written (the next free one when it is new: there are few labels). */
  private tagId(label: string): number {
    let id = this.tagIds.get(label);
    if (id === undefined) {
      id = this.tagLabels.push(label) - 1;
      this.tagIds.set(label, id);
    }
    return id;
  }

  /** A small number per language (0: none), for filters that test many slots. */
  languageOf(slot: number): number {
    return this.languageCodes[slot]!;
  }

  codeOfLanguage(language: string): number {
    return this.languageCode.get(language) ?? 0;
  }

  /** 1 for a deleted question (indexed for administrators). */
  isDeleted(slot: number): number {
    return this.deletedFlags[slot]!;
  }

  /** isDeleted of every slot, for loops over many (valid until the next change). */
  get deleted(): Uint8Array {
    return this.deletedFlags;
  }

  /** The category id, 0 for none. */
  categoryOf(slot: number): number {
    return this.categoryIds[slot]!;
  }

  /** When the question was published (ms; 0: not known). */
  timeOf(slot: number): number {
    return this.times[slot] ?? 0;
  }

  /** The knowledge space id, 0 for none. */
  spaceOf(slot: number): number {
    return this.spaceIds[slot]!;
  }

  /** The id of a word, given the next free id when it is new (ids are never reused: the store persists them). */
  internTerm(term: string): number {
    const known = this.termIds.get(term);
    return known ?? this.defineTerm(this.termTexts.length, term);
  }

  /** Adds a word with its id (ids come in order: the next free one). */
  defineTerm(id: number, term: string): number {
    if (id !== this.termTexts.length) throw new Error(`word id ${id} out of order (next is ${this.termTexts.length})`);
    this.termIds.set(term, id);
    this.termTexts.push(term);
    this.sizes = grow(this.sizes, id + 1);
    this.dead = grow(this.dead, id + 1);
    this.df = grow(this.df, id + 1);
    this.unitDf = grow(this.unitDf, id + 1);
    this.askedDf = grow(this.askedDf, id + 1);
    if (this.askedLogDfs.length < id + 1) {
      const next = new Float64Array(Math.max(id + 1, this.askedLogDfs.length * 2)).fill(Number.NaN);
      next.set(this.askedLogDfs);
      this.askedLogDfs = next;
    }
    this.unitIdfs = grow(this.unitIdfs, id + 1);
    this.unitIdfFresh = grow(this.unitIdfFresh, id + 1);
    this.stemmed = grow(this.stemmed, id + 1);
    this.vocabulary.add(term, id);
    return id;
  }

  /**
   * Indexes many questions at once (opening an index): the postings of every word are allocated
   * once, at their final size, instead of growing question by question. `questions` is read twice
   * (counting, then placing), so that the questions need not all be in memory at once.
   */
  load(questions: () => Iterable<{ id: number; forward: Forward; length: number; facets: Facets }>) {
    const extra = new Int32Array(this.termTexts.length);
    for (const q of questions()) for (let j = 0; j < q.forward.length; j += FORWARD_STRIDE) extra[q.forward[j]!]!++;
    for (let id = 0; id < extra.length; id++) {
      const needed = (this.sizes[id]! + extra[id]!) * STRIDE;
      if (needed > this.arena.room(id)) this.arena.resize(id, needed, this.sizes[id]! * STRIDE);
    }
    for (const q of questions()) this.put(q.id, q.forward, q.length, q.facets);
    this.vocabulary.merge();
  }

  private slotFor(questionId: number): number {
    let slot = this.slots.get(questionId);
    if (slot !== undefined) return slot;
    slot = this.slots.size;
    this.slots.set(questionId, slot);
    if (!this.readWords) this.forward.push(null);
    this.languageNames.push('');
    this.held = grow(this.held, slot + 1);
    this.ids = grow(this.ids, slot + 1);
    this.authorIds = grow(this.authorIds, slot + 1);
    this.times = grow(this.times, slot + 1);
    this.lengths = grow(this.lengths, slot + 1);
    this.lengthClasses = grow(this.lengthClasses, slot + 1);
    this.languageCodes = grow(this.languageCodes, slot + 1);
    this.deletedFlags = grow(this.deletedFlags, slot + 1);
    this.categoryIds = grow(this.categoryIds, slot + 1);
    this.spaceIds = grow(this.spaceIds, slot + 1);
    this.unitNorms = grow(this.unitNorms, slot + 1);
    this.unitNormFresh = grow(this.unitNormFresh, slot + 1);
    this.ids[slot] = questionId;
    return slot;
  }

  /**
   * Indexes a question (replacing what the index held of it): its words with their frequencies, its
   * length in words, its facets; with `readWords`, `previous` are the words it was indexed with.
   */
  put(questionId: number, words: Forward, length: number, facets: Facets, previous?: Forward | null) {
    this.phraseCountsKept.clear();
    const slot = this.slotFor(questionId);
    this.unindex(slot, previous);
    const askedIds: number[] = [];
    const askedWordWeights: number[] = [];
    for (let i = 0; i < words.length; i += FORWARD_STRIDE) {
      const id = words[i]!;
      const packed = words[i + 1]!;
      // A word counted in no field is not in the question (its posting would read as dead).
      if (packed === 0) continue;
      this.place(id, slot, packed);
      this.df[id]!++;
      if (weighted(packed, this.unitWeights) > 0) {
        this.unitDf[id]!++;
        this.unitIdfFresh[id] = 0;
      }
      const asked = weighted(packed, askedWeights);
      if (asked > 0) {
        this.askedDf[id]!++;
        this.askedLogDfs[id] = Number.NaN;
        askedIds.push(id);
        askedWordWeights.push(asked);
      }
    }
    if (!this.readWords) this.forward[slot] = words;
    this.asked.set(slot, askedIds, askedWordWeights);
    this.addStems(words, facets.language);
    this.unitNormFresh[slot] = 0;
    this.lengths[slot] = length;
    this.lengthClasses[slot] = lengthClass(length);
    this.totalLength += length;
    this.docs++;
    this.held[slot] = 1;
    this.tagRuns.set(
      slot,
      facets.tags.map((label) => this.tagId(label)),
    );
    this.languageNames[slot] = facets.language;
    this.authorIds[slot] = facets.author_id;
    this.times[slot] = facets.time;
    let code = this.languageCode.get(facets.language);
    if (code === undefined) {
      code = Math.min(255, this.languageCode.size + 1);
      this.languageCode.set(facets.language, code);
    }
    this.languageCodes[slot] = code;
    this.deletedFlags[slot] = facets.is_deleted ? 1 : 0;
    this.categoryIds[slot] = facets.category_id ?? 0;
    this.spaceIds[slot] = facets.knowledge_space_id ?? 0;
    for (const label of new Set(facets.tags.map((t) => t.toLowerCase()))) {
      const entry = this.tags.get(label);
      if (entry) entry.count++;
      else this.tags.set(label, { label: facets.tags.find((t) => t.toLowerCase() === label)!, count: 1 });
    }
    this.settle();
  }

  /** Where a slot's posting is in a word's list, or where it would go (the first posting of a greater slot). */
  private find(id: number, slot: number): number {
    const list = this.arena.data(id);
    const base = this.arena.start(id);
    let low = 0;
    let high = this.sizes[id]!;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (slotAt(list, base + middle * STRIDE) < slot) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Writes a slot's posting into a word's list: in place of its dead one, at the end (a new question), or shifted into slot order. */
  private place(id: number, slot: number, packed: number) {
    const size = this.sizes[id]!;
    let list = this.arena.data(id);
    let base = this.arena.start(id);
    const code = this.counts.code(packed);
    const position = size > 0 && slotAt(list, base + (size - 1) * STRIDE) < slot ? size : this.find(id, slot);
    const at = position * STRIDE;
    if (position < size && slotAt(list, base + at) === slot) {
      list[base + at + 2] = code;
      this.dead[id]!--;
      return;
    }
    const room = this.arena.room(id);
    if ((size + 1) * STRIDE > room) {
      // Half again, not double: postings are most of the index, and a list that grows by half
      // leaves a third of that free at most.
      this.arena.resize(id, Math.max(2 * STRIDE, Math.ceil((room * 1.5) / STRIDE) * STRIDE), size * STRIDE);
      list = this.arena.data(id);
      base = this.arena.start(id);
    }
    if (position < size) list.copyWithin(base + at + STRIDE, base + at, base + size * STRIDE);
    list[base + at] = slot & 0xffff;
    list[base + at + 1] = slot >>> 16;
    list[base + at + 2] = code;
    this.sizes[id] = size + 1;
  }

  /** Takes a question out of the index; with `readWords`, `previous` are the words it was indexed with. */
  remove(questionId: number, previous?: Forward | null) {
    this.phraseCountsKept.clear();
    const slot = this.slots.get(questionId);
    if (slot !== undefined) this.unindex(slot, previous);
    this.settle();
  }

  /** The words a slot is indexed with (null: none). */
  private wordsOf(slot: number): Forward | null {
    if (!this.readWords) return this.forward[slot] ?? null;
    if (!this.holds(slot)) return null;
    return this.readAhead?.get(slot) ?? this.readWords(this.ids[slot]!);
  }

  private unindex(slot: number, previous?: Forward | null) {
    if (!this.holds(slot)) return;
    const forward = this.readWords ? previous : this.forward[slot];
    if (!forward) throw new Error(`the words question ${this.ids[slot]} was indexed with are needed to take it out`);
    if (!this.readWords) this.forward[slot] = null;
    this.asked.clear(slot);
    const crowded: number[] = [];
    for (let j = 0; j < forward.length; j += FORWARD_STRIDE) {
      const id = forward[j]!;
      const packed = forward[j + 1]!;
      if (packed === 0) continue;
      // Only this slot's own posting: `find` answers the next slot's where this one has none.
      const position = this.find(id, slot);
      const at = this.arena.start(id) + position * STRIDE;
      const list = this.arena.data(id);
      if (position < this.sizes[id]! && slotAt(list, at) === slot && list[at + 2] !== 0) {
        list[at + 2] = 0;
        this.dead[id]!++;
      }
      this.df[id]!--;
      if (weighted(packed, this.unitWeights) > 0) {
        this.unitDf[id]!--;
        this.unitIdfFresh[id] = 0;
      }
      if (weighted(packed, askedWeights) > 0) {
        this.askedDf[id]!--;
        this.askedLogDfs[id] = Number.NaN;
      }
      if (this.sizes[id]! > COMPACT_MIN && this.dead[id]! * 2 > this.sizes[id]!) crowded.push(id);
    }
    for (const id of crowded) this.compact(id);
    this.totalLength -= this.lengths[slot]!;
    this.docs--;
    this.deletedFlags[slot] = 0;
    this.categoryIds[slot] = 0;
    this.spaceIds[slot] = 0;
    this.languageCodes[slot] = 0;
    const tags = this.tagsOf(slot);
    this.held[slot] = 0;
    this.tagRuns.clear(slot);
    this.languageNames[slot] = '';
    this.authorIds[slot] = 0;
    this.times[slot] = 0;
    for (const label of new Set(tags.map((t) => t.toLowerCase()))) {
      const entry = this.tags.get(label)!;
      if (--entry.count === 0) this.tags.delete(label);
    }
  }

  /**
   * Gives back the room posting lists grew into, once a catch-up is done (live changes come one
   * question at a time, and a list that must grow again grows by half), and sorts the catch-up's
   * words into the vocabulary, so that no query waits for that.
   */
  trim() {
    this.vocabulary.merge();
    for (let id = 0; id < this.termTexts.length; id++) {
      const used = this.sizes[id]! * STRIDE;
      if (this.arena.ownsBlock(id) && this.arena.room(id) - used > Math.max(8 * STRIDE, used >>> 3)) this.arena.resize(id, used, used);
    }
    // The lists in shared blocks move, each at its size, into new blocks, one old block after the other.
    this.arena.retire();
    this.moveLists(this.arena.sharedBlocks(), true);
  }

  /** Moves the lists of these blocks to the newest block (`exact`: at their size, else with their room) and drops the blocks. */
  private moveLists(blocks: readonly number[], exact: boolean) {
    const inBlock = new Map<number, number[]>(blocks.map((b) => [b, []]));
    for (let id = 0; id < this.termTexts.length; id++) inBlock.get(this.arena.blockOf(id))?.push(id);
    for (const [b, ids] of inBlock) {
      for (const id of ids) {
        const used = this.sizes[id]! * STRIDE;
        this.arena.resize(id, exact ? used : this.arena.room(id), used);
      }
      this.arena.drop(b);
    }
  }

  /** Empties the blocks that lists mostly left (they grew or shrank elsewhere). */
  private settle() {
    const sparse = this.arena.sparseBlocks();
    if (sparse.length) this.moveLists(sparse, false);
  }

  /** Drops a word's dead postings (the order of the others stays). */
  private compact(id: number) {
    const list = this.arena.data(id);
    const base = this.arena.start(id);
    const size = this.sizes[id]!;
    let kept = 0;
    for (let at = 0; at < size * STRIDE; at += STRIDE) {
      if (list[base + at + 2] === 0) continue;
      if (kept * STRIDE !== at) list.copyWithin(base + kept * STRIDE, base + at, base + at + STRIDE);
      kept++;
    }
    this.sizes[id] = kept;
    this.dead[id] = 0;
    if (this.arena.room(id) > 4 * (kept + 1) * STRIDE) this.arena.resize(id, 2 * kept * STRIDE, kept * STRIDE);
  }

  /**
   * How many questions have each phrase of words (a word's other forms, a prefix's words): a word
   * of it in the weighted fields. A phrase of one word counts its postings; one of more, the
   * questions of all its words once each, in a bitset of the slots. Kept until the index changes:
   * a query's rare words come again, and the count reads every posting of their forms.
   */
  phraseCounts(phrases: ReadonlyArray<readonly number[]>, weights: FieldWeights): readonly number[] {
    const kept = phrases.reduce((n, ids) => n + ids.length, 0) <= KEPT_PHRASE_WORDS;
    const key = kept ? `${weights.join(' ')}|${phrases.map((ids) => ids.join(' ')).join('|')}` : '';
    const known = kept ? this.phraseCountsKept.get(key) : undefined;
    if (known) return known;
    const frequencies = this.counts.weightedBy(weights);
    const words = (this.slotCount + 31) >>> 5;
    if (this.slotBits.length < words) this.slotBits = new Int32Array(Math.ceil(words * 1.25));
    const bits = this.slotBits;
    const counts = phrases.map((ids) => {
      let count = 0;
      for (const id of ids) {
        const list = this.arena.view(id, this.sizes[id]! * STRIDE);
        for (let q = 0; q < list.length; q += STRIDE) {
          if (frequencies[list[q + 2]!]! <= 0) continue;
          if (ids.length === 1) {
            count++;
            continue;
          }
          const slot = slotAt(list, q);
          const bit = 1 << (slot & 31);
          if (bits[slot >>> 5]! & bit) continue;
          bits[slot >>> 5]! |= bit;
          count++;
        }
      }
      if (ids.length > 1) bits.fill(0, 0, words);
      return count;
    });
    if (kept) {
      if (this.phraseCountsKept.size >= KEPT_PHRASE_COUNTS) this.phraseCountsKept.clear();
      this.phraseCountsKept.set(key, counts);
    }
    return counts;
  }

  /** A word's phrases, scaled, to be read as far as question-at-a-time ranking asks (ScoredWord). */
  scoredWord(
    phrases: ReadonlyArray<readonly number[]>,
    weights: FieldWeights,
    scales: readonly PhraseScale[],
    questions: number,
  ): ScoredWord {
    const lists = phrases.map((ids) => ids.map((id) => this.arena.view(id, this.sizes[id]! * STRIDE)));
    return new ScoredWord(this, lists, this.counts.weightedBy(weights), scales, questions);
  }

  /** One word's BM25 in one question at weighted frequency `f`, times `idf`: what scoreTerm adds for it. */
  wordScore(slot: number, idf: number, f: number, k1 = 1.2, b = 0.75): number {
    return termScore(idf * (k1 + 1), f, k1 * (1 - b), (k1 * b) / this.averageLength, this.lengths[slot]!);
  }

  /**
   * BM25 of one word over its live postings, times `idf`, added into the accumulator's score with
   * bit `bit` set in both word masks (exact, any): idf · f·(k1 + 1) / (f + k1·(1 − b + b·length/avgLength)), f
   * the weighted frequency (FTS5's bm25() with column weights, so its calibration carries over).
   */
  scoreTerm(termId: number, idf: number, weights: FieldWeights, bit: number, acc: Accumulator, k1 = 1.2, b = 0.75) {
    const list = this.arena.view(termId, this.sizes[termId]! * STRIDE);
    const end = list.length;
    const lengthFactor = (k1 * b) / this.averageLength;
    const base = k1 * (1 - b);
    const top = idf * (k1 + 1);
    const { score, exact, any } = acc;
    const lengths = this.lengths;
    const frequencies = this.counts.weightedBy(weights);
    for (let i = 0; i < end; i += STRIDE) {
      const f = frequencies[list[i + 2]!]!;
      if (f <= 0) continue;
      const slot = slotAt(list, i);
      acc.touch(slot);
      score[slot]! += termScore(top, f, base, lengthFactor, lengths[slot]!);
      exact[slot]! |= bit;
      any[slot]! |= bit;
    }
  }

  /** How many questions have the word in the weighted fields (its document frequency under a field restriction). */
  countMatches(termId: number, weights: FieldWeights): number {
    const list = this.arena.view(termId, this.sizes[termId]! * STRIDE);
    const end = list.length;
    const frequencies = this.counts.weightedBy(weights);
    let n = 0;
    for (let i = 0; i < end; i += STRIDE) if (frequencies[list[i + 2]!]! > 0) n++;
    return n;
  }

  /** A heap of the k best slots, ties broken as every ranking of this index breaks them. */
  slotHeap(k: number): SlotHeap {
    return new SlotHeap(
      k,
      (slot) => this.times[slot] ?? 0,
      (slot) => this.ids[slot]!,
    );
  }

  /**
   * Question at a time: calls `visit(slot, score)` for each question with a query word whose score
   * reaches the floor, the score as scoreTerm scores each word, summed in word order (so exactly
   * the accumulators' sums); `visit` answers the floor from then on (never lower: what it passed
   * over is not looked at again). `all`: only questions with every word.
   * A word is either whole (its postings are read here) or scored beforehand with its other forms
   * (a rare word: `scored`, its few questions in slot order with what it adds to each). Such a
   * word adds its whole-word score to one sum and its forms' to another, the score is their sum,
   * and with `all` a question that has a word only in another form scores its forms alone: as
   * match.ts's accumulators add them.
   * Over the slot-ordered lists with MaxScore (Turtle and Flood 1995): a list whose word's most,
   * with the most of the weaker words, stays under the floor no longer brings candidates; it is
   * only looked into (galloping search) for the candidates the others bring, and not even then
   * when the rest cannot lift the candidate to the floor; and a posting whose word cannot lift its
   * question to the floor even with every other word at its most is passed over. So every
   * question at or above the floor is visited, and few below it. At a million questions a common
   * word's list has hundreds of thousands of postings; its score is needed only where it decides.
   * A candidate is weighed at the shortest length of its length class until it has come through,
   * and only then is its length read.
   */
  bestOfWords(
    words: ReadonlyArray<{ id: number; idf: number; scored?: ScoredWord }>,
    weights: FieldWeights,
    all: boolean,
    visit: (slot: number, score: number) => number,
    k1 = 1.2,
    b = 0.75,
  ) {
    const n = words.length;
    const scored = words.map((w) => w.scored ?? null);
    const lists = words.map((w) => (w.scored || w.id < 0 ? EMPTY_LIST : this.arena.view(w.id, this.sizes[w.id]! * STRIDE)));
    // How many questions each list has (postings, or a scored word's phrases' questions).
    const questions = scored.map((word, i) => word?.questions ?? lists[i]!.length / STRIDE);
    if (!n || (all && questions.some((q) => !q))) return;
    const tops = words.map((w) => w.idf * (k1 + 1));
    // A whole word adds at most idf · (k1 + 1), a scored one at most its phrases' most (ROUNDING more);
    // a word without postings (not in the index) adds nothing.
    const bounds = tops.map((top, i) => (questions[i] ? (scored[i]?.most ?? top) * ROUNDING : 0));
    const lengthFactor = (k1 * b) / this.averageLength;
    const base = k1 * (1 - b);
    const lengths = this.lengths;
    const classes = this.lengthClasses;
    const frequencies = this.counts.weightedBy(weights);
    // OR: the weakest bound first, lists order[bringing..] bring candidates and the others are
    // looked into, strongest first. AND: the shortest list first; it brings, the others are looked
    // into in order.
    const order = Array.from({ length: n }, (_, i) => i).sort((x, y) =>
      all ? questions[x]! - questions[y]! || x - y : bounds[x]! - bounds[y]! || x - y,
    );
    // upTo[t]: the most the words order[0..t] add together.
    const upTo = new Float64Array(n);
    for (let t = 0, sum = 0; t < n; t++) upTo[t] = sum += bounds[order[t]!]!;
    const everyBound = upTo[n - 1]!;
    let bringing = all ? n - 1 : 0;
    const at = new Int32Array(n);
    // The slot of the posting each bringing list is at (-1: to be found, NO_SLOT: at its end), and
    // what each word found in the candidate: a whole word's weighted frequency (0: not found), a
    // scored word's entry (-1: not found).
    const current = new Int32Array(n).fill(-1);
    const found = new Float64Array(n);
    const entries = new Int32Array(n).fill(-1);
    let floor = Number.NEGATIVE_INFINITY;
    for (;;) {
      const from = all ? 0 : bringing;
      const to = all ? 1 : n;
      // The next candidate: the lowest slot a bringing list is at. A posting whose word cannot
      // lift its question to the floor even with every other word at its most is passed over
      // (f·top < (floor − others)·(f + base): its score with the shortest length stays below);
      // so are postings without the word in these fields, and dead ones. A list stays at the
      // posting it found until that is taken (the floor may have risen since: the candidate is
      // then dropped below, as it would have been passed over).
      let slot = NO_SLOT;
      // The list at the candidate, and the next slot any other bringing list is at.
      let lowest = -1;
      let next = NO_SLOT;
      for (let t = from; t < to; t++) {
        const i = order[t]!;
        let c = current[i]!;
        if (c < 0) {
          const top = bounds[i]!;
          const needed = floor - (everyBound - top);
          let p = at[i]!;
          const word = scored[i];
          if (word) {
            for (;;) {
              const { adds, size } = word;
              while (p < size && adds[p]! < needed) p++;
              if (p < size || !word.has(p, needed)) break;
            }
            current[i] = c = p < word.size ? word.slots[p]! : NO_SLOT;
          } else {
            const list = lists[i]!;
            for (; p < list.length; p += STRIDE) {
              const f = frequencies[list[p + 2]!]!;
              if (f > 0 && top * f >= needed * (f + base)) break;
            }
            current[i] = c = p < list.length ? slotAt(list, p) : NO_SLOT;
          }
          at[i] = p;
        }
        if (c < slot) {
          next = slot;
          slot = c;
          lowest = i;
        } else if (c < next) next = c;
      }
      if (slot === NO_SLOT) return;
      // OR with several bringing lists, and none but this one brings this candidate or the slots up
      // to the next one they are at: a question there has only this list's word of the bringing
      // ones, and what that adds, with the lists not bringing at their most, must reach the floor
      // (the test the candidate would fail below). Postings that cannot are passed over here, one
      // comparison each: with common words most of a bringing list is such postings (at a million
      // questions, four common words made 150,000–260,000 candidates a query, and fewer than 2,000
      // came through). A list that brings alone is tested so already, at any length, as it is found.
      if (!all && bringing < n - 1 && slot < next) {
        const rest = bringing > 0 ? upTo[bringing - 1]! : 0;
        const i = lowest;
        let p = at[i]!;
        const word = scored[i];
        if (word) {
          const needed = floor - (everyBound - bounds[i]!);
          while (word.has(p, needed) && word.slots[p]! < next && word.adds[p]! * ROUNDING + rest < floor) p++;
        } else {
          const list = lists[i]!;
          const top = tops[i]!;
          for (; p < list.length; p += STRIDE) {
            const s = slotAt(list, p);
            if (s >= next) break;
            const f = frequencies[list[p + 2]!]!;
            if (f > 0 && termScore(top, f, base, lengthFactor, CLASS_LENGTHS[classes[s]!]!) * ROUNDING + rest >= floor) break;
          }
        }
        if (p !== at[i]) {
          // Found again from here, as any list's next posting is.
          at[i] = p;
          current[i] = -1;
          continue;
        }
      }
      // The candidate is scored at the shortest length of its class (lengthClass) until it has come
      // through: most fall short even so, and their length, a read from a large array at random
      // (at a million questions most of what a candidate cost), is never read.
      const shortest = CLASS_LENGTHS[classes[slot]!]!;
      let high = 0;
      for (let t = from; t < to; t++) {
        const i = order[t]!;
        if (current[i] !== slot) continue;
        const word = scored[i];
        if (word) {
          entries[i] = at[i]!;
          high += word.adds[at[i]!]!;
          at[i]!++;
        } else {
          const f = frequencies[lists[i]![at[i]! + 2]!]!;
          found[i] = f;
          high += termScore(tops[i]!, f, base, lengthFactor, shortest);
          at[i]! += STRIDE;
        }
        current[i] = -1;
      }
      let kept = true;
      const lookups = all ? n - 1 : bringing;
      for (let step = 1; step <= lookups; step++) {
        const t = all ? step : bringing - step;
        // What the lists not yet looked into can add at most.
        const rest = all ? everyBound - upTo[t - 1]! : upTo[t]!;
        if (high * ROUNDING + rest < floor) {
          kept = false;
          break;
        }
        const i = order[t]!;
        const word = scored[i];
        let has: boolean;
        if (word) {
          if (word.reached <= slot) word.fill(slot, floor - (everyBound - bounds[i]!));
          const p = seekSlot(word.slots, word.size, at[i]!, slot);
          at[i] = p;
          has = p < word.size && word.slots[p] === slot;
          if (has) {
            entries[i] = p;
            high += word.adds[p]!;
          }
        } else {
          const list = lists[i]!;
          const p = seek(list, at[i]!, slot);
          at[i] = p;
          const f = p < list.length && slotAt(list, p) === slot ? frequencies[list[p + 2]!]! : 0;
          has = f > 0;
          if (has) {
            found[i] = f;
            high += termScore(tops[i]!, f, base, lengthFactor, shortest);
          }
        }
        if (!has && all) {
          kept = false;
          break;
        }
      }
      if (!kept || high * ROUNDING < floor) {
        for (let i = 0; i < n; i++) {
          found[i] = 0;
          entries[i] = -1;
        }
        continue;
      }
      // Its score: the sums in word order at its length, as the accumulators add them.
      const length = lengths[slot]!;
      let whole = 0;
      let forms = 0;
      let allWhole = true;
      for (let i = 0; i < n; i++) {
        const f = found[i]!;
        if (f > 0) {
          whole += termScore(tops[i]!, f, base, lengthFactor, length);
          found[i] = 0;
        }
        const e = entries[i]!;
        if (e >= 0) {
          const word = scored[i]!;
          if (word.whole[e]) whole += word.adds[e]!;
          else {
            forms += word.adds[e]!;
            allWhole = false;
          }
          entries[i] = -1;
        }
      }
      const s = (all && !allWhole ? 0 : whole) + forms;
      if (s < floor) continue;
      floor = visit(slot, s);
      if (all) continue;
      while (bringing < n && upTo[bringing]! < floor) bringing++;
      if (bringing === n) return;
    }
  }

  /** The BM25 saturation of a weighted frequency in a slot (for phrases: ScoredWord). */
  saturate(slot: number, f: number, k1 = 1.2, b = 0.75) {
    return (f * (k1 + 1)) / (f + k1 * (1 - b + (b * Math.min(this.lengths[slot]!, MAX_LENGTH)) / this.averageLength));
  }

  /**
   * Calls `visit(termId, weight)` for every word of a question's similarity unit (unitFieldWeights),
   * weighted log(1 + tf) · unitIdf (words with weight 0 left out). `words`: the question's words
   * when the caller has them already (each read is a row of the file).
   */
  forEachUnitWeight(slot: number, visit: (termId: number, weight: number) => void, words?: Forward | null) {
    const forward = words === undefined ? this.wordsOf(slot) : words;
    if (!forward) return;
    for (let j = 0; j < forward.length; j += FORWARD_STRIDE) {
      const u = weighted(forward[j + 1]!, this.unitWeights);
      if (u <= 0) continue;
      const w = Math.log1p(u) * this.unitIdf(forward[j]!);
      if (w > 0) visit(forward[j]!, w);
    }
  }

  /** The fields (bit i: FIELDS[i]) in which a question has one of the words. */
  fieldsWith(slot: number, termIds: ReadonlySet<number>): number {
    const forward = this.wordsOf(slot);
    let mask = 0;
    if (!forward) return mask;
    for (let j = 0; j < forward.length; j += FORWARD_STRIDE) {
      if (!termIds.has(forward[j]!)) continue;
      unpackCounts(forward[j + 1]!).forEach((c, field) => {
        if (c > 0) mask |= 1 << field;
      });
    }
    return mask;
  }

  /** Whether a question has one of the words in the weighted fields. */
  hasAnyTerm(slot: number, termIds: ReadonlySet<number>, weights: FieldWeights): boolean {
    const forward = this.wordsOf(slot);
    if (!forward) return false;
    for (let j = 0; j < forward.length; j += FORWARD_STRIDE)
      if (termIds.has(forward[j]!) && weighted(forward[j + 1]!, weights) > 0) return true;
    return false;
  }

  /**
   * Cosine of a question's unit with a query vector whose weights (unit length) sit at their word
   * ids in `dense` (0 elsewhere), each word of the unit weighted log(1 + tf) · unitIdf.
   */
  unitCosine(slot: number, dense: Float64Array): number {
    const forward = this.wordsOf(slot);
    if (!forward) return 0;
    this.refreshWeights();
    const known = this.unitNormFresh[slot] === 1;
    let dot = 0;
    let squares = 0;
    for (let j = 0; j < forward.length; j += FORWARD_STRIDE) {
      const id = forward[j]!;
      const q = id < dense.length ? dense[id]! : 0;
      // With its norm known, only the words of the query vector are weighed.
      if (q === 0 && known) continue;
      const u = weighted(forward[j + 1]!, this.unitWeights);
      if (u <= 0) continue;
      const w = Math.log1p(u) * this.unitIdf(id);
      if (q !== 0) dot += w * q;
      if (w > 0) squares += w * w;
    }
    // The norm (the unit's words weighted log(1 + tf) · unitIdf) from the same loop: each word weighed once.
    if (!known) {
      this.unitNorms[slot] = Math.sqrt(squares);
      this.unitNormFresh[slot] = 1;
    }
    const norm = this.unitNorms[slot]!;
    return norm > 0 ? Math.min(1, Math.max(0, dot / norm)) : 0;
  }

  /**
   * Cosine of what a question asked (title twice, description, tags; log(1 + tf) · idf) with a
   * query vector whose weights (unit length) sit at their word ids in `dense` (0 elsewhere). The
   * idf is askedIdf's with N = `documents`, and the words of `own` one question rarer.
   */
  askedCosine(slot: number, dense: Float64Array, documents = this.docs, own?: ReadonlySet<number>): number {
    const { ids, weights } = this.asked;
    const from = this.asked.start(slot);
    const to = from + this.asked.count(slot);
    const logN = Math.log(documents + 1);
    const logDfs = this.askedLogDfs;
    let dot = 0;
    let norm = 0;
    for (let k = from; k < to; k++) {
      const id = ids[k]!;
      // Title twice, description, tags (askedFieldWeights): a whole number, so log(1 + u) is looked up.
      const u = weights[k]!;
      let logDf = logDfs[id]!;
      if (Number.isNaN(logDf)) logDf = this.askedLogDf(id);
      // A question read as if it were not indexed: its own words are one question rarer.
      if (own?.has(id)) logDf = Math.log(this.askedDf[id]! - 0.5);
      const w = LOG1P[u]! * (logN - logDf);
      if (w <= 0) continue;
      norm += w * w;
      if (id < dense.length) dot += w * dense[id]!;
    }
    return norm > 0 ? Math.min(1, Math.max(0, dot / Math.sqrt(norm))) : 0;
  }

  /** The ids of the words of what a question asked (title, description, tags). */
  askedTerms(slot: number): Set<number> {
    return new Set(this.asked.of(slot));
  }
}
