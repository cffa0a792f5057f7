import { grow } from '../core/typed-arrays.ts';

/**
 * Where the index's posting lists live: runs of large blocks that many lists share, instead of a
 * buffer each. A buffer each was 115,000 buffers at 100,000 questions, a V8 object and a malloc
 * block apiece, and the lists' growth during a catch-up left about 90 MiB that malloc kept but
 * could not give back (free room between live blocks: `malloc_trim` released it when called from
 * a debugger). Blocks this large are mapped by themselves and go back to the system whole. A list
 * is a number (the word's id) and its place three numbers in typed arrays (block, start, room):
 * a view object per list was another 11 MiB of heap.
 *
 * A list that grows or shrinks leaves a hole in its block; a block whose lists fill less than
 * `LIVE_SHARE` of it is emptied into the newest block and dropped (`sparseBlocks`, `blockOf`,
 * `drop`: the owner moves the lists, since it knows which words are there). A list larger than a
 * quarter of a block gets a block of its own.
 */
const LIVE_SHARE = 0.75;
/** What a list without postings reads. */
const EMPTY = new Uint16Array(0);

interface Block {
  data: Uint16Array;
  /** Cells of it in lists. */
  live: number;
  /** Whether it is the block of one large list. */
  own: boolean;
}

export class ListArena {
  private readonly blockCells: number;
  private readonly blocks: Array<Block | null> = [];
  /** Per list: its block + 1 (0: no room, an empty list), where it starts there, and its room in cells. */
  private homes = new Int32Array(1024);
  private starts = new Int32Array(1024);
  private rooms = new Int32Array(1024);
  private current = -1;
  private top = 0;
  /** Whether a block may have become sparse since sparseBlocks last looked. */
  private thinned = false;

  /** `blockCells`: the size of a block in 16-bit cells (32 MiB by default: mapped by itself, above malloc's largest threshold). */
  constructor(blockCells = 1 << 24) {
    this.blockCells = blockCells;
  }

  /** The cells a list is in (read from `start(list)` on); an empty list reads an empty array. */
  data(list: number): Uint16Array {
    const home = this.homes[list] ?? 0;
    return home ? this.blocks[home - 1]!.data : EMPTY;
  }

  start(list: number): number {
    return this.starts[list] ?? 0;
  }

  /**
   * A view of a list's first `cells`, for the loops that read a whole list: V8 runs a loop over a
   * view from 0 faster than one over the block from an offset (12% in scoring, a view object aside).
   */
  view(list: number, cells: number): Uint16Array {
    const start = this.start(list);
    return this.data(list).subarray(start, start + cells);
  }

  /** The cells a list has room for. */
  room(list: number): number {
    return this.rooms[list] ?? 0;
  }

  /** Gives a list room for `cells` (zeroed beyond what it keeps), keeping its first `used` cells; its old room is given back. */
  resize(list: number, cells: number, used: number) {
    this.homes = grow(this.homes, list + 1);
    this.starts = grow(this.starts, list + 1);
    this.rooms = grow(this.rooms, list + 1);
    const oldHome = this.homes[list]!;
    const oldStart = this.starts[list]!;
    const oldRoom = this.rooms[list]!;
    const kept = Math.min(used, cells, oldRoom);
    if (cells === 0) {
      this.homes[list] = 0;
      this.starts[list] = 0;
    } else if (cells > this.blockCells >>> 2) {
      const b = this.freeBlock();
      this.blocks[b] = { data: new Uint16Array(cells), live: cells, own: true };
      this.homes[list] = b + 1;
      this.starts[list] = 0;
    } else {
      if (this.current < 0 || this.top + cells > this.blockCells) this.newBlock();
      const block = this.blocks[this.current]!;
      this.homes[list] = this.current + 1;
      this.starts[list] = this.top;
      this.top += cells;
      block.live += cells;
    }
    this.rooms[list] = cells;
    if (oldHome) {
      const old = this.blocks[oldHome - 1]!;
      if (kept) this.data(list).set(old.data.subarray(oldStart, oldStart + kept), this.starts[list]);
      old.live -= oldRoom;
      if (old.own) this.blocks[oldHome - 1] = null;
      else this.thinned = true;
    }
  }

  /** New lists go to a new block (the blocks there are can then all be emptied). */
  retire() {
    this.current = -1;
    this.thinned = true;
  }

  /** Blocks shared by lists, the newest excepted, whose lists fill less than LIVE_SHARE of them. */
  sparseBlocks(): number[] {
    if (!this.thinned) return [];
    this.thinned = false;
    const out: number[] = [];
    for (const [b, block] of this.blocks.entries())
      if (block && !block.own && b !== this.current && block.live < LIVE_SHARE * this.blockCells) out.push(b);
    return out;
  }

  /** Every block that lists share. */
  sharedBlocks(): number[] {
    return this.blocks.flatMap((block, b) => (block && !block.own ? [b] : []));
  }

  /** The block a list is in (-1: none, an empty list). */
  blockOf(list: number): number {
    return (this.homes[list] ?? 0) - 1;
  }

  /** Whether a list has a block of its own. */
  ownsBlock(list: number): boolean {
    const home = this.homes[list] ?? 0;
    return home > 0 && this.blocks[home - 1]!.own;
  }

  /** Forgets a shared block whose lists have all moved; new lists go to a new block. */
  drop(b: number) {
    const block = this.blocks[b];
    if (!block) return;
    if (block.live !== 0) throw new Error(`posting block ${b} still holds ${block.live} cells`);
    this.blocks[b] = null;
    if (b === this.current) this.current = -1;
  }

  /** Cells held by shared blocks, and of them in live lists. */
  get usage() {
    let held = 0;
    let live = 0;
    for (const block of this.blocks)
      if (block && !block.own) {
        held += this.blockCells;
        live += block.live;
      }
    return { held, live };
  }

  private freeBlock() {
    const free = this.blocks.indexOf(null);
    return free >= 0 ? free : this.blocks.length;
  }

  private newBlock() {
    // The block that was newest may have holes already.
    this.thinned = true;
    const b = this.freeBlock();
    this.blocks[b] = { data: new Uint16Array(this.blockCells), live: 0, own: false };
    this.current = b;
    this.top = 0;
  }
}
