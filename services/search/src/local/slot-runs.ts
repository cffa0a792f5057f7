import { grow } from '../core/typed-arrays.ts';

/**
 * A run of numbers per slot, kept in memory in typed arrays: what each question asked (its word
 * ids, each with a small weight) and its tags (tag ids). An array per question was an object or
 * two per slot on V8's heap: at a million questions the tags alone were 71 MiB of it and two
 * million objects, which every full collection marked (a full collection of the opened index took 121 ms with them, 40 with these runs).
 *
 * The runs of all slots sit in one array (and, weighted, a parallel one of weights), a slot's in
 * one run; a slot set again gets a new run at the end, and the arrays are compacted when half of
 * them is runs no slot has any more.
 */
export class SlotRuns {
  ids = new Uint32Array(1 << 12);
  /** One weight (1 to 255) per id; empty when the runs are not weighted. */
  weights: Uint8Array;
  private starts = new Uint32Array(1 << 10);
  private counts = new Uint32Array(1 << 10);
  private top = 0;
  private live = 0;

  constructor(options: { weighted: boolean }) {
    this.weights = new Uint8Array(options.weighted ? this.ids.length : 0);
  }

  /** Where a slot's run starts in `ids` (and `weights`). */
  start(slot: number): number {
    return slot < this.starts.length ? this.starts[slot]! : 0;
  }

  /** How many ids a slot's run has (0: none, or no such slot). */
  count(slot: number): number {
    return slot < this.counts.length ? this.counts[slot]! : 0;
  }

  /** A slot's ids. */
  of(slot: number): Uint32Array {
    const from = this.start(slot);
    return this.ids.subarray(from, from + this.count(slot));
  }

  /** Replaces a slot's run with `ids` (and, weighted, their `weights`: the same length). */
  set(slot: number, ids: readonly number[], weights?: readonly number[]) {
    this.clear(slot);
    if (!ids.length) return;
    this.reserve(ids.length);
    this.starts = grow(this.starts, slot + 1);
    this.counts = grow(this.counts, slot + 1);
    this.ids.set(ids, this.top);
    if (this.weights.length) this.weights.set(weights!, this.top);
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

  /** Room for `n` more ids at the end: the live runs copied into arrays of their size and half again when more than half is dead, else the arrays grown by half. */
  private reserve(n: number) {
    if (this.top + n <= this.ids.length) return;
    const compact = this.live + n <= this.ids.length / 2;
    const size = Math.max(Math.ceil(((compact ? this.live : this.top) + n) * 1.5), 1 << 12);
    const ids = new Uint32Array(size);
    const weights = new Uint8Array(this.weights.length ? size : 0);
    if (!compact) {
      ids.set(this.ids.subarray(0, this.top));
      if (weights.length) weights.set(this.weights.subarray(0, this.top));
    } else {
      let top = 0;
      for (let slot = 0; slot < this.counts.length; slot++) {
        const count = this.counts[slot]!;
        if (!count) continue;
        const at = this.starts[slot]!;
        ids.set(this.ids.subarray(at, at + count), top);
        if (weights.length) weights.set(this.weights.subarray(at, at + count), top);
        this.starts[slot] = top;
        top += count;
      }
      this.top = top;
    }
    this.ids = ids;
    this.weights = weights;
  }
}
