/**
 * The `k` best question slots by score, as a min-heap whose root is the worst one kept. Equal
 * scores put the newer question (the later `time`, then the higher id) first, so the order is
 * total and a ranking does not depend on the order slots were offered in.
 */
export class SlotHeap {
  readonly scores: Float64Array;
  readonly slots: Int32Array;
  size = 0;
  readonly k: number;
  private readonly timeOf: (slot: number) => number;
  private readonly idOf: (slot: number) => number;

  constructor(k: number, timeOf: (slot: number) => number, idOf: (slot: number) => number) {
    this.k = k;
    this.timeOf = timeOf;
    this.idOf = idOf;
    this.scores = new Float64Array(k);
    this.slots = new Int32Array(k);
  }

  /** Whether score sa of slot a ranks below score sb of slot b. */
  private below(sa: number, a: number, sb: number, b: number): boolean {
    return sa < sb || (sa === sb && (this.timeOf(a) - this.timeOf(b) || this.idOf(a) - this.idOf(b)) < 0);
  }

  /** The lowest score kept once k are kept (-Infinity before): a slot must reach it to enter. */
  get floor(): number {
    return this.size === this.k && this.k > 0 ? this.scores[0]! : Number.NEGATIVE_INFINITY;
  }

  /** Whether a slot with this score would be kept. */
  admits(score: number, slot: number): boolean {
    if (this.size < this.k) return true;
    return this.k > 0 && this.below(this.scores[0]!, this.slots[0]!, score, slot);
  }

  /** Keeps the slot (call only when `admits` says so), dropping the worst when k are kept. */
  push(score: number, slot: number) {
    const { scores, slots } = this;
    if (this.size === this.k) {
      let at = 0;
      for (;;) {
        const l = 2 * at + 1;
        const r = l + 1;
        let least = -1;
        let ls = score;
        let lslot = slot;
        if (l < this.size && this.below(scores[l]!, slots[l]!, ls, lslot)) {
          least = l;
          ls = scores[l]!;
          lslot = slots[l]!;
        }
        if (r < this.size && this.below(scores[r]!, slots[r]!, ls, lslot)) least = r;
        if (least < 0) break;
        scores[at] = scores[least]!;
        slots[at] = slots[least]!;
        at = least;
      }
      scores[at] = score;
      slots[at] = slot;
      return;
    }
    let at = this.size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.below(score, slot, scores[parent]!, slots[parent]!)) break;
      scores[at] = scores[parent]!;
      slots[at] = slots[parent]!;
      at = parent;
    }
    scores[at] = score;
    slots[at] = slot;
  }

  /** The slots kept, best first. */
  sorted(): Array<{ slot: number; score: number }> {
    const out: Array<{ slot: number; score: number }> = [];
    for (let i = 0; i < this.size; i++) out.push({ slot: this.slots[i]!, score: this.scores[i]! });
    return out.sort((a, b) => (this.below(a.score, a.slot, b.score, b.slot) ? 1 : -1));
  }
}
