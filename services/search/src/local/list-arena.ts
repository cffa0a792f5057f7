/**
 * Where the index's posting lists live: views into large blocks that many lists share, instead of
 * a buffer each. A buffer each was 115,000 buffers at 100,000 questions, a V8 object and a malloc
 * block apiece, and the lists' growth during a catch-up left about 90 MiB that malloc kept but
 * could not give back (free room between live blocks: `malloc_trim` released it when called from
 * a debugger). Blocks this large are mapped by themselves and go back to the system whole.
 *
 * A list that grows or shrinks leaves a hole in its block; a block whose lists fill less than
 * `LIVE_SHARE` of it is emptied into the newest block and dropped (`sparseBlocks`, `blockIndex`,
 * `drop`: the owner moves the lists, since it holds them). A list larger than a quarter of a block
 * gets a buffer of its own.
 */
const LIVE_SHARE = 0.75;
/** The list of no postings, shared by every word without any. */
export const EMPTY = new Uint16Array(0);

export class ListArena {
  private readonly blockUnits: number;
  private readonly blocks: Array<{ data: Uint16Array; live: number } | null> = [];
  private readonly blockOf = new Map<ArrayBufferLike, number>();
  private current = -1;
  private top = 0;
  /** Whether a block may have become sparse since sparseBlocks last looked. */
  private thinned = false;

  /** `blockUnits`: the size of a block in 16-bit units (32 MiB by default: mapped by itself, above malloc's largest threshold). */
  constructor(blockUnits = 1 << 24) {
    this.blockUnits = blockUnits;
  }

  /** A zeroed list of `units` 16-bit units. */
  allocate(units: number): Uint16Array {
    if (units === 0) return EMPTY;
    if (units > this.blockUnits >>> 2) return new Uint16Array(units);
    if (this.current < 0 || this.top + units > this.blockUnits) this.newBlock();
    const block = this.blocks[this.current]!;
    const list = block.data.subarray(this.top, this.top + units);
    this.top += units;
    block.live += units;
    return list;
  }

  /** Gives a list's room back (its block's hole; a list of its own is left to the garbage collector). */
  release(list: Uint16Array) {
    const b = this.blockOf.get(list.buffer);
    if (b === undefined) return;
    this.blocks[b]!.live -= list.length;
    this.thinned = true;
  }

  /** A list with room for `units` holding the first `used` of `list`, whose room is given back. */
  move(list: Uint16Array, units: number, used: number): Uint16Array {
    const next = this.allocate(units);
    next.set(list.subarray(0, Math.min(used, units)));
    this.release(list);
    return next;
  }

  /** New lists go to a new block (the blocks there are can then all be emptied). */
  retire() {
    this.current = -1;
    this.thinned = true;
  }

  /** Blocks, the newest excepted, whose lists fill less than LIVE_SHARE of them. */
  sparseBlocks(): number[] {
    if (!this.thinned) return [];
    this.thinned = false;
    const out: number[] = [];
    for (const [b, block] of this.blocks.entries())
      if (block && b !== this.current && block.live < LIVE_SHARE * this.blockUnits) out.push(b);
    return out;
  }

  /** Every block there is. */
  allBlocks(): number[] {
    return this.blocks.flatMap((block, b) => (block ? [b] : []));
  }

  /** The block a list is in (-1: a list of its own, or empty). */
  blockIndex(list: Uint16Array): number {
    return this.blockOf.get(list.buffer) ?? -1;
  }

  /** Forgets a block whose lists have all moved; new lists go to a new block. */
  drop(b: number) {
    const block = this.blocks[b];
    if (!block) return;
    if (block.live !== 0) throw new Error(`posting block ${b} still holds ${block.live} units`);
    this.blockOf.delete(block.data.buffer);
    this.blocks[b] = null;
    if (b === this.current) this.current = -1;
  }

  /** Units held by blocks, and of them in live lists. */
  get usage() {
    let held = 0;
    let live = 0;
    for (const block of this.blocks)
      if (block) {
        held += this.blockUnits;
        live += block.live;
      }
    return { held, live };
  }

  private newBlock() {
    // The block that was newest may have holes already.
    this.thinned = true;
    const data = new Uint16Array(this.blockUnits);
    const free = this.blocks.indexOf(null);
    const b = free >= 0 ? free : this.blocks.length;
    this.blocks[b] = { data, live: 0 };
    this.blockOf.set(data.buffer, b);
    this.current = b;
    this.top = 0;
  }
}
