import { grow } from './typed-arrays.ts';

/**
 * What each question asked, kept in memory: the words of its title, description and tags, each
 * with one small weight (title twice, description, tags: at most 100). Expert search compares a
 * question with a few hundred neighbour candidates by these words alone (TermIndex.askedCosine);
 * reading each candidate's words from the file was a third of its CPU. About 35 words a question,
 * 5 bytes a word (17 MiB at 100,000 questions), against 8 bytes for every word of every field in
 * the file.
 *
 * The words of all questions sit in two parallel arrays, a question's in one run; a question
 * indexed again gets a new run at the end, and the arrays are compacted when half of them is runs
 * no question has any more.
 */
export class AskedWords {
  ids = new Uint32Array(1 << 12);
  weights = new Uint8Array(1 << 12);
  private starts = new Uint32Array(1 << 10);
  private counts = new Uint32Array(1 << 10);
  private top = 0;
  private live = 0;

  /** Where a slot's run starts in `ids` and `weights`. */
  start(slot: number): number {
    return slot < this.starts.length ? this.starts[slot]! : 0;
  }

  /** How many words a slot's run has (0: none, or no such slot). */
  count(slot: number): number {
    return slot < this.counts.length ? this.counts[slot]! : 0;
  }

  /** Replaces a slot's words with `ids` and their `weights` (the same length; weights 1 to 255). */
  set(slot: number, ids: readonly number[], weights: readonly number[]) {
    this.clear(slot);
    if (!ids.length) return;
    this.reserve(ids.length);
    this.starts = grow(this.starts, slot + 1);
    this.counts = grow(this.counts, slot + 1);
    this.ids.set(ids, this.top);
    this.weights.set(weights, this.top);
    this.starts[slot] = this.top;
    this.counts[slot] = ids.length;
    this.top += ids.length;
    this.live += ids.length;
  }

  clear(slot: number) {
    if (slot >= this.counts.length) return;
    this.live -= this.counts[slot]!;
    this.counts[slot] = 0;
  }

  /** Room for `n` more words at the end: the live runs copied into arrays of their size and half again when more than half is dead, else the arrays grown by half. */
  private reserve(n: number) {
    if (this.top + n <= this.ids.length) return;
    const compact = this.live + n <= this.ids.length / 2;
    const size = Math.max(Math.ceil(((compact ? this.live : this.top) + n) * 1.5), 1 << 12);
    const ids = new Uint32Array(size);
    const weights = new Uint8Array(size);
    if (!compact) {
      ids.set(this.ids.subarray(0, this.top));
      weights.set(this.weights.subarray(0, this.top));
    } else {
      let top = 0;
      for (let slot = 0; slot < this.counts.length; slot++) {
        const count = this.counts[slot]!;
        if (!count) continue;
        const at = this.starts[slot]!;
        ids.set(this.ids.subarray(at, at + count), top);
        weights.set(this.weights.subarray(at, at + count), top);
        this.starts[slot] = top;
        top += count;
      }
      this.top = top;
    }
    this.ids = ids;
    this.weights = weights;
  }
}
