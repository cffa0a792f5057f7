/**
 * Who knows what, kept from the content events: for each tag and user, the value of their
 * published solutions on live questions with that tag (acceptance, upvotes and ratings, fading with
 * age) and their recommendations (forwards of questions with that tag to them, also of questions
 * deleted since). Asking questions never counts: posers stay anonymous. The facts themselves are in
 * the store's file (per solution and forward); this is their sum per tag and user, built at open
 * and kept current question by question; never the source of anything.
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
  accepted: boolean;
}

/** What a question contributes: its tags, whether it is published and not deleted, its solutions, the users it was forwarded to. */
export interface QuestionFacts {
  id: number;
  tags: readonly string[];
  live: boolean;
  solutions: readonly SolutionFacts[];
  /** One entry per forward (a user forwarded to twice counts twice). */
  recipients: readonly number[];
}

const DAY = 86_400_000;
/** A solution counts half after this many days. */
export const HALF_LIFE_DAYS = 730;
const DAY_ZERO = Date.UTC(2000, 0, 1);

/** The weight that turns a record's value (Σ value · 2^(days since DAY_ZERO / HALF_LIFE_DAYS)) into the value at `now`. */
export const fading = (now: number) => 2 ** (-(now - DAY_ZERO) / DAY / HALF_LIFE_DAYS);

/**
 * What a solution says about its author: accepted ones most, then upvotes and good ratings; a
 * bad rating counts against it, but every solution counts something.
 */
export function solutionValue(s: Pick<SolutionFacts, 'accepted' | 'upvotes' | 'rating' | 'rating_count'>): number {
  const rating = s.rating !== null && s.rating_count > 0 ? ((s.rating - 3) / 2) * Math.min(1, s.rating_count / 3) : 0;
  return Math.max(0.2, 1 + (s.accepted ? 2 : 0) + 0.5 * Math.log1p(s.upvotes) + 0.5 * rating);
}

export const timeWeight = (time: number) => 2 ** ((time - DAY_ZERO) / DAY / HALF_LIFE_DAYS);

/** A solution's value faded to `now`. */
export const fadedValue = (s: SolutionFacts, now: number) => solutionValue(s) * timeWeight(s.time) * fading(now);

/** Per tag and user: live solutions, recommendations, value (Σ solutionValue · 2^(days since DAY_ZERO / HALF_LIFE_DAYS)). */
const STATS = 3;

/** The records of the users who have one on a tag: a row of STATS numbers per user, reused when it empties. */
class TagTable {
  readonly rows = new Map<number, number>();
  data = new Float64Array(STATS * 4);
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
    if (this.data[at]! > 0 || this.data[at + 1]! > 0) return;
    this.rows.delete(user);
    this.free.push(row);
  }
}

/**
 * The expertise of the whole network in memory, compactly (a typed table per tag: the heap holds
 * a few hundred objects, not one per solution, so garbage collection stays short). It knows the
 * sums only: a question's change is applied as "take back what it contributed, add what it
 * contributes now", the store handing both (store.ts).
 */
export class Expertise {
  private readonly tables = new Map<string, TagTable>();
  /** User → the value of all their live solutions, whatever the tags (unfaded, like a record's value). */
  readonly activity = new Map<number, number>();

  /** Adds (sign 1) or takes back (sign -1) what a question contributes. */
  apply(facts: QuestionFacts, sign: 1 | -1) {
    const solutions = facts.live ? facts.solutions.filter((s) => s.live) : [];
    if (!solutions.length && !facts.recipients.length) return;
    for (const tag of new Set(facts.tags.map((t) => t.toLowerCase()))) {
      const table = this.tables.get(tag) ?? new TagTable();
      this.tables.set(tag, table);
      const touched = new Set<number>();
      for (const s of solutions) {
        const at = table.row(s.author_id) * STATS;
        table.data[at]! += sign;
        table.data[at + 2]! += sign * solutionValue(s) * timeWeight(s.time);
        touched.add(s.author_id);
      }
      for (const user of facts.recipients) {
        table.data[table.row(user) * STATS + 1]! += sign;
        touched.add(user);
      }
      if (sign < 0) for (const user of touched) table.release(user);
      if (!table.rows.size) this.tables.delete(tag);
    }
    for (const s of solutions) {
      const total = (this.activity.get(s.author_id) ?? 0) + sign * solutionValue(s) * timeWeight(s.time);
      if (total > 1e-9) this.activity.set(s.author_id, total);
      else this.activity.delete(s.author_id);
    }
  }

  /** Calls `visit` with each user's record on a tag: its value (unfaded) and recommendations. */
  forEachOnTag(tag: string, visit: (user: number, value: number, recommendations: number) => void) {
    const table = this.tables.get(tag);
    if (!table) return;
    const d = table.data;
    for (const [user, row] of table.rows) visit(user, d[row * STATS + 2]!, d[row * STATS + 1]!);
  }
}
