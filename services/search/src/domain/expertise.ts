import { grow } from '../core/typed-arrays.ts';

/**
 * Who knows what, kept from the content events: for each tag and user, the value of their
 * published solutions on live questions with that tag (acceptance, upvotes and ratings, fading with
 * age), how many they are, and their recommendations (forwards of questions with that tag to them,
 * also of questions deleted since); for each user, their answers, accepted answers and when they
 * answered. Asking questions never counts: posers stay anonymous. The facts themselves are in the
 * store's file (per solution and forward); this is their sum, built at open and kept current
 * question by question; never the source of anything. The fit (domain/expert-history.ts) keeps one
 * of these too, as the network stood at each moment of its past.
 */

/** A solution as expertise sees it. */
export interface SolutionFacts {
  id: number;
  question_id: number;
  author_id: number;
  /** Published and not deleted. */
  live: boolean;
  /** Milliseconds since the epoch; when it was published (or created). */
  time: number;
  rating: number | null;
  rating_count: number;
  upvotes: number;
  /** When the question's poser accepted it (ms); null when not accepted. */
  accepted_at: number | null;
}

/** What a question contributes: its tags, whether it is published and not deleted, its solutions, the users it was forwarded to. */
export interface QuestionFacts {
  id: number;
  tags: readonly string[];
  /** Its knowledge space (null: none): a caller who may not read the space counts nothing of it. */
  space: number | null;
  live: boolean;
  solutions: readonly SolutionFacts[];
  /** One entry per forward (a user forwarded to twice counts twice). */
  recipients: readonly number[];
}

export const DAY = 86_400_000;
/** A solution's value counts half after this many days. */
export const HALF_LIFE_DAYS = 730;
const DAY_ZERO = Date.UTC(2000, 0, 1);

/** The weight that turns a record's value (Σ value · 2^(days since DAY_ZERO / HALF_LIFE_DAYS)) into the value at `now`. */
export const fading = (now: number) => 2 ** (-(now - DAY_ZERO) / DAY / HALF_LIFE_DAYS);

/**
 * What a solution says about its author: accepted ones most, then upvotes and good ratings; a
 * bad rating counts against it, but every solution counts something.
 */
export function solutionValue(s: Pick<SolutionFacts, 'accepted_at' | 'upvotes' | 'rating' | 'rating_count'>): number {
  const rating = s.rating !== null && s.rating_count > 0 ? ((s.rating - 3) / 2) * Math.min(1, s.rating_count / 3) : 0;
  return Math.max(0.2, 1 + (s.accepted_at !== null ? 2 : 0) + 0.5 * Math.log1p(s.upvotes) + 0.5 * rating);
}

export const timeWeight = (time: number) => 2 ** ((time - DAY_ZERO) / DAY / HALF_LIFE_DAYS);

/** A solution's value faded to `now`. */
export const fadedValue = (s: SolutionFacts, now: number) => solutionValue(s) * timeWeight(s.time) * fading(now);

/** A user's record on one tag. */
export interface TagRecord {
  /** Σ solutionValue · timeWeight (unfaded: times `fading(now)` gives the value today). */
  value: number;
  /** Live solutions. */
  count: number;
  recommendations: number;
}

/** A user's record over all tags. */
export interface UserRecord {
  answers: number;
  accepted: number;
  /** Σ solutionValue · timeWeight over all their live solutions. */
  value: number;
  /** When they answered (ms), ascending. */
  times: Float64Array;
}

/** Per tag and user: live solutions, recommendations, value. */
const STATS = 3;

/** The records of the users who have one on a tag: a row of STATS numbers per user, reused when it empties. */
class TagTable {
  readonly rows = new Map<number, number>();
  data = new Float64Array(STATS * 4);
  /** Live solutions on the tag, of everyone. */
  answers = 0;
  private free: number[] = [];
  private used = 0;

  row(user: number): number {
    let row = this.rows.get(user);
    if (row !== undefined) return row;
    row = this.free.pop() ?? this.used++;
    if ((row + 1) * STATS > this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data.fill(0, row * STATS, (row + 1) * STATS);
    this.rows.set(user, row);
    return row;
  }

  /** Drops the user's row when nothing is left in it. */
  release(user: number) {
    const row = this.rows.get(user)!;
    const at = row * STATS;
    if (this.data[at]! > 0.5 || this.data[at + 1]! > 0.5) return;
    this.rows.delete(user);
    this.free.push(row);
  }
}

/** A user's totals: answers, accepted, value; and their answer times (sorted, with spare room). */
interface UserTotals {
  answers: number;
  accepted: number;
  value: number;
  times: Float64Array;
}

/** The sums of one part of the network: the whole of it, or the questions of one knowledge space. */
class Ledger {
  readonly tables = new Map<string, TagTable>();
  readonly users = new Map<number, UserTotals>();
  /** Live solutions on live questions, of everyone. */
  answers = 0;
  /** Of those, the accepted ones. */
  accepted = 0;

  get empty() {
    return this.tables.size === 0 && this.users.size === 0 && this.answers === 0;
  }

  /** Adds or takes back one live solution (`value`: solutionValue · timeWeight) of a live question with these (lower-case, distinct) tags. */
  applySolution(tags: readonly string[], s: SolutionFacts, value: number, sign: 1 | -1) {
    for (const tag of tags) {
      const table = this.table(tag);
      const at = table.row(s.author_id) * STATS;
      table.data[at]! += sign;
      table.data[at + 2]! += sign * value;
      table.answers += sign;
      if (sign < 0) this.release(tag, table, s.author_id);
    }
    this.answers += sign;
    if (s.accepted_at !== null) this.accepted += sign;
    const totals = this.users.get(s.author_id) ?? { answers: 0, accepted: 0, value: 0, times: new Float64Array(4) };
    totals.answers += sign;
    totals.accepted += sign * (s.accepted_at !== null ? 1 : 0);
    totals.value += sign * value;
    totals.times =
      sign > 0 ? insertSorted(totals.times, totals.answers - 1, s.time) : removeSorted(totals.times, totals.answers + 1, s.time);
    if (totals.answers > 0) this.users.set(s.author_id, totals);
    else this.users.delete(s.author_id);
  }

  applyForward(tags: readonly string[], user: number, sign: 1 | -1) {
    for (const tag of tags) {
      const table = this.table(tag);
      table.data[table.row(user) * STATS + 1]! += sign;
      if (sign < 0) this.release(tag, table, user);
    }
  }

  private table(tag: string) {
    let table = this.tables.get(tag);
    if (!table) {
      table = new TagTable();
      this.tables.set(tag, table);
    }
    return table;
  }

  private release(tag: string, table: TagTable, user: number) {
    table.release(user);
    if (!table.rows.size) this.tables.delete(tag);
  }
}

/** A user's record read into `record` (valid until the next change). */
const readRecord = (table: TagTable, row: number, record: TagRecord) => {
  const at = row * STATS;
  record.count = Math.round(table.data[at]!);
  record.recommendations = Math.round(table.data[at + 1]!);
  record.value = table.data[at + 2]!;
};

/**
 * The expertise of a whole network in memory, compactly (a typed table per tag: the heap holds a
 * few hundred objects per tag, not one per solution, so garbage collection stays short). It knows
 * the sums only: a change is applied as "take back what it contributed, add what it contributes
 * now" (local/store.ts hands both).
 *
 * Beside the sums of the whole network it keeps those of each knowledge space's questions, so that
 * a caller who may not read some closed spaces is answered from the rest (the whole minus those
 * spaces): nobody becomes an expert for them on the strength of what they cannot read. Questions
 * in a space are counted twice in memory for it; questions in no space once.
 */
export class Expertise {
  private readonly whole = new Ledger();
  private readonly spaces = new Map<number, Ledger>();
  /** Per live question, its live solutions (answered-solutions below: no object or buffer per question). */
  private readonly answered = new AnsweredSolutions();

  /** Live solutions on live questions, of everyone. */
  get answers() {
    return this.whole.answers;
  }

  /** Of those, the accepted ones. */
  get accepted() {
    return this.whole.accepted;
  }

  /** Adds (sign 1) or takes back (sign -1) what a question contributes. */
  apply(facts: QuestionFacts, sign: 1 | -1) {
    const tags = [...new Set(facts.tags.map((t) => t.toLowerCase()))];
    if (facts.live) for (const s of facts.solutions) if (s.live) this.applySolution(tags, s, sign, facts.space);
    for (const user of facts.recipients) this.applyForward(tags, user, sign, facts.space);
  }

  /** The sums of the ledgers a change goes to: the whole network's, and its space's. */
  private ledgers(space: number | null): Ledger[] {
    if (space === null) return [this.whole];
    let ledger = this.spaces.get(space);
    if (!ledger) {
      ledger = new Ledger();
      this.spaces.set(space, ledger);
    }
    return [this.whole, ledger];
  }

  private tidy(space: number | null) {
    if (space !== null && this.spaces.get(space)?.empty) this.spaces.delete(space);
  }

  /** Adds or takes back one live solution of a live question with these (lower-case, distinct) tags, in `space` (null: none). */
  applySolution(tags: readonly string[], s: SolutionFacts, sign: 1 | -1, space: number | null = null) {
    const value = solutionValue(s) * timeWeight(s.time);
    for (const ledger of this.ledgers(space)) ledger.applySolution(tags, s, value, sign);
    this.tidy(space);
    if (sign > 0) this.answered.add(s.question_id, s.id, s.author_id, s.time, solutionValue(s));
    else this.answered.remove(s.question_id, s.id);
  }

  /** The live solutions of a live question: who wrote them, when, and what they are worth (solutionValue). */
  answersOn(questionId: number): Array<{ author_id: number; time: number; value: number }> {
    return this.answered.of(questionId);
  }

  /** The live questions a user has live solutions on, with when they last answered each. */
  answeredBy(user: number): Array<{ question_id: number; time: number }> {
    return this.answered.by(user);
  }

  /** Adds or takes back one forward of a question with these tags to a user (a recommendation). */
  applyForward(tags: readonly string[], user: number, sign: 1 | -1, space: number | null = null) {
    for (const ledger of this.ledgers(space)) ledger.applyForward(tags, user, sign);
    this.tidy(space);
  }

  /** The ledgers of the hidden spaces that hold something (none: the whole network counts). */
  private hiddenLedgers(hidden: ReadonlySet<number> | undefined): Ledger[] {
    if (!hidden?.size || !this.spaces.size) return [];
    const out: Ledger[] = [];
    for (const space of hidden) {
      const ledger = this.spaces.get(space);
      if (ledger) out.push(ledger);
    }
    return out;
  }

  /**
   * The users with a record on a tag, read in place (valid until the next change); without the
   * questions of the `hidden` spaces when given (a user whose record is all there has none).
   */
  tagUsers(tag: string, hidden?: ReadonlySet<number>) {
    const table = this.whole.tables.get(tag);
    const minus = this.hiddenLedgers(hidden).flatMap((l) => {
      const t = l.tables.get(tag);
      return t ? [t] : [];
    });
    if (!minus.length)
      return {
        /** Live solutions on questions with the tag, of everyone. */
        answers: table?.answers ?? 0,
        forEach(visit: (user: number, record: TagRecord) => void) {
          if (!table) return;
          const record = { count: 0, recommendations: 0, value: 0 };
          for (const [user, row] of table.rows) {
            readRecord(table, row, record);
            visit(user, record);
          }
        },
        has: (user: number) => table?.rows.has(user) ?? false,
      };
    const part = { count: 0, recommendations: 0, value: 0 };
    /** The user's record without the hidden spaces' part; false when nothing is left. */
    const visible = (user: number, row: number, record: TagRecord) => {
      readRecord(table!, row, record);
      for (const t of minus) {
        const hiddenRow = t.rows.get(user);
        if (hiddenRow === undefined) continue;
        readRecord(t, hiddenRow, part);
        record.count -= part.count;
        record.recommendations -= part.recommendations;
        record.value -= part.value;
      }
      return record.count > 0 || record.recommendations > 0;
    };
    return {
      answers: (table?.answers ?? 0) - minus.reduce((sum, t) => sum + t.answers, 0),
      forEach(visit: (user: number, record: TagRecord) => void) {
        if (!table) return;
        const record = { count: 0, recommendations: 0, value: 0 };
        for (const [user, row] of table.rows) if (visible(user, row, record)) visit(user, record);
      },
      has: (user: number) => {
        const row = table?.rows.get(user);
        return row !== undefined && visible(user, row, { count: 0, recommendations: 0, value: 0 });
      },
    };
  }

  /** A user's record over all tags; without the questions of the `hidden` spaces when given. */
  user(id: number, hidden?: ReadonlySet<number>): UserRecord | undefined {
    const t = this.whole.users.get(id);
    if (!t) return undefined;
    const record = { answers: t.answers, accepted: t.accepted, value: t.value, times: t.times.subarray(0, t.answers) };
    for (const ledger of this.hiddenLedgers(hidden)) {
      const h = ledger.users.get(id);
      if (!h) continue;
      record.answers -= h.answers;
      record.accepted -= h.accepted;
      record.value -= h.value;
      record.times = withoutTimes(record.times, h.times.subarray(0, h.answers));
    }
    return record.answers > 0 ? record : undefined;
  }

  /** Live solutions on live questions outside the `hidden` spaces. */
  answersOutside(hidden?: ReadonlySet<number>): number {
    return this.whole.answers - this.hiddenLedgers(hidden).reduce((sum, l) => sum + l.answers, 0);
  }
}

/** The sorted times of `all` without those of `part` (each taken once), sorted. */
function withoutTimes(all: Float64Array, part: Float64Array): Float64Array {
  const out = new Float64Array(all.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < all.length; i++) {
    while (j < part.length && part[j]! < all[i]!) j++;
    if (j < part.length && part[j] === all[i]) {
      j++;
      continue;
    }
    out[n++] = all[i]!;
  }
  return out.subarray(0, n);
}

/**
 * The live solutions of each live question, as rows of typed columns chained per question and per
 * author: no buffer or object per question or person.
 */
class AnsweredSolutions {
  private readonly first = new Map<number, number>();
  private readonly firstOfAuthor = new Map<number, number>();
  private solution = new Int32Array(1024);
  private question = new Int32Array(1024);
  private author = new Int32Array(1024);
  private time = new Float64Array(1024);
  private value = new Float64Array(1024);
  /** The next row of the same question (-1: none). */
  private next = new Int32Array(1024);
  /** The next and previous rows of the same author (-1: none): a row leaves its author's chain in one step. */
  private nextOfAuthor = new Int32Array(1024);
  private previousOfAuthor = new Int32Array(1024);
  private readonly free: number[] = [];
  private rows = 0;

  add(questionId: number, solutionId: number, authorId: number, time: number, value: number) {
    const row = this.free.pop() ?? this.rows++;
    if (row >= this.next.length) {
      this.solution = grow(this.solution, row + 1);
      this.question = grow(this.question, row + 1);
      this.author = grow(this.author, row + 1);
      this.time = grow(this.time, row + 1);
      this.value = grow(this.value, row + 1);
      this.next = grow(this.next, row + 1);
      this.nextOfAuthor = grow(this.nextOfAuthor, row + 1);
      this.previousOfAuthor = grow(this.previousOfAuthor, row + 1);
    }
    this.solution[row] = solutionId;
    this.question[row] = questionId;
    this.author[row] = authorId;
    this.time[row] = time;
    this.value[row] = value;
    this.next[row] = this.first.get(questionId) ?? -1;
    this.first.set(questionId, row);
    const after = this.firstOfAuthor.get(authorId) ?? -1;
    this.nextOfAuthor[row] = after;
    this.previousOfAuthor[row] = -1;
    if (after >= 0) this.previousOfAuthor[after] = row;
    this.firstOfAuthor.set(authorId, row);
  }

  remove(questionId: number, solutionId: number) {
    let previous = -1;
    for (let row = this.first.get(questionId) ?? -1; row >= 0; previous = row, row = this.next[row]!) {
      if (this.solution[row] !== solutionId) continue;
      if (previous >= 0) this.next[previous] = this.next[row]!;
      else if (this.next[row]! >= 0) this.first.set(questionId, this.next[row]!);
      else this.first.delete(questionId);
      const [before, after] = [this.previousOfAuthor[row]!, this.nextOfAuthor[row]!];
      if (after >= 0) this.previousOfAuthor[after] = before;
      if (before >= 0) this.nextOfAuthor[before] = after;
      else if (after >= 0) this.firstOfAuthor.set(this.author[row]!, after);
      else this.firstOfAuthor.delete(this.author[row]!);
      this.free.push(row);
      return;
    }
  }

  of(questionId: number): Array<{ author_id: number; time: number; value: number }> {
    const out: Array<{ author_id: number; time: number; value: number }> = [];
    for (let row = this.first.get(questionId) ?? -1; row >= 0; row = this.next[row]!)
      out.push({ author_id: this.author[row]!, time: this.time[row]!, value: this.value[row]! });
    return out;
  }

  /** The questions an author answered, with when (each question once, at its latest solution). */
  by(authorId: number): Array<{ question_id: number; time: number }> {
    const latest = new Map<number, number>();
    for (let row = this.firstOfAuthor.get(authorId) ?? -1; row >= 0; row = this.nextOfAuthor[row]!)
      latest.set(this.question[row]!, Math.max(latest.get(this.question[row]!) ?? -Infinity, this.time[row]!));
    return [...latest].map(([question_id, time]) => ({ question_id, time }));
  }
}

/** Inserts `time` into the first `length` entries of a sorted array (grown when full). */
function insertSorted(times: Float64Array, length: number, time: number): Float64Array {
  let out = times;
  if (length >= times.length) {
    out = new Float64Array(Math.max(4, times.length * 2));
    out.set(times.subarray(0, length));
  }
  let i = length;
  while (i > 0 && out[i - 1]! > time) {
    out[i] = out[i - 1]!;
    i--;
  }
  out[i] = time;
  return out;
}

/** Removes one `time` from the first `length` entries of a sorted array. */
function removeSorted(times: Float64Array, length: number, time: number): Float64Array {
  let i = 0;
  while (i < length && times[i] !== time) i++;
  if (i < length) times.copyWithin(i, i + 1, length);
  return times;
}
