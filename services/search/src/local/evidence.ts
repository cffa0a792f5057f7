import type { HistoryQuestion, HistorySolution, NetworkHistory } from '../domain/expert-history.ts';
import { type ExpertEvidence, latestAnswered, type Neighbour, type TagFacts, type UserFacts } from '../domain/experts.ts';
import { pacer } from '../domain/pace.ts';
import { askedCounts, FORWARD_STRIDE } from './postings.ts';
import { askedSimilarTo } from './similarity.ts';
import type { SearchStore } from './store.ts';

/**
 * Expert search's evidence from this instance's own index (domain/experts.ts reads it); without
 * the questions of the `hidden` knowledge spaces, the records earned there and the tags used only
 * there, when given (a caller's closed spaces).
 */
export class LocalEvidence implements ExpertEvidence {
  private readonly store: SearchStore;
  private readonly hidden: ReadonlySet<number>;

  constructor(store: SearchStore, hidden: Iterable<number> = []) {
    this.store = store;
    this.hidden = new Set(hidden);
  }

  /** Whether the tag exists for the caller: not used only in the hidden spaces. */
  private visibleTag = (key: string) => !this.store.tagUses.onlyIn(key, this.hidden);

  async clock() {
    const now = Date.now();
    return this.store.latestPublished > 0 ? Math.min(now, this.store.latestPublished) : now;
  }

  async neighbours(text: string, language: string | undefined, limit: number, self?: number): Promise<Neighbour[]> {
    const { store } = this;
    const found = askedSimilarTo(store, text, language, self, this.hidden)
      // Equally similar: the later question first, then the higher id (ids differ between loads, times do not).
      .sort((a, b) => b.score - a.score || b.time - a.time || b.id - a.id)
      .slice(0, limit);
    return found.map(({ id, score, time }) => {
      const facets = store.index.facets(store.index.slotOf(id))!;
      return {
        id,
        score,
        time,
        tags: facets.tags,
        knowledge_space_id: facets.knowledge_space_id,
        solutions: store.expertise.answersOn(id),
      };
    });
  }

  async namedTags(text: string) {
    return new Set([...this.store.tagsNamedIn(text)].filter(this.visibleTag));
  }

  async tags(keys: readonly string[]) {
    const out = new Map<string, TagFacts>();
    for (const key of keys) {
      const tag = this.visibleTag(key) ? this.store.tag(key) : undefined;
      if (tag)
        out.set(key, {
          label: tag.label,
          excluded_from_suggestions: tag.excluded_from_suggestions,
          linked: [...this.store.linkedTags(key)].filter(this.visibleTag),
        });
    }
    return out;
  }

  async onTags(keys: readonly string[]) {
    return new Map(keys.map((key) => [key, this.store.expertise.tagUsers(key, this.hidden)]));
  }

  async answers() {
    return this.store.expertise.answersOutside(this.hidden);
  }

  async users(ids: readonly number[]) {
    const out = new Map<number, UserFacts>();
    for (const id of ids) {
      const record = this.store.expertise.user(id, this.hidden) ?? { answers: 0, accepted: 0, value: 0, times: new Float64Array(0) };
      out.set(id, { ...record, deleted: this.store.deletedUsers.has(id), system: this.store.systemUsers.has(id) });
    }
    return out;
  }

  async answered(users: readonly number[]) {
    const { store, hidden } = this;
    const readable = (id: number) => !hidden.size || !hidden.has(store.index.facets(store.index.slotOf(id))?.knowledge_space_id ?? -1);
    return new Map(
      users.map((user) => [user, latestAnswered(store.expertise.answeredBy(user).filter((a) => readable(a.question_id)))] as const),
    );
  }

  async minExperts() {
    return this.store.minExperts;
  }

  async askerRecord(asker: number, now: number) {
    return this.store.askerRecord(asker, now, this.hidden);
  }
}

/** Rows read per statement: reading a large network's past gives the event loop back between (and within) them. */
const CHUNK = 500;

/**
 * The network's past up to `cutoff` as the local index holds it (domain/expert-history.ts), read
 * in chunks. Questions that are deleted now are left out of the past too; tags count from the
 * first question that carried them.
 */
export async function localHistory(store: SearchStore, cutoff: number): Promise<Omit<NetworkHistory, 'routings'>> {
  const before = new Date(cutoff).toISOString();
  const pace = pacer();
  const yieldToEvents = async () => {
    const pause = pace();
    if (pause) await pause;
  };
  const questions: HistoryQuestion[] = [];
  for (let after = 0; ; ) {
    const rows = store.rows<{
      id: number;
      author_id: number;
      title: string;
      description: string;
      tags: string;
      knowledge_space_id: number | null;
      published: string;
      terms: Uint8Array;
    }>(
      `select id, author_id, title, description, tags, knowledge_space_id, published, terms from questions
        where id > ? and terms is not null and is_deleted = 0 and published < ? order by id limit ${CHUNK}`,
      after,
      before,
    );
    for (const row of rows) {
      await yieldToEvents();
      const forward = new Int32Array(row.terms.slice().buffer);
      const terms: number[] = [];
      const counts: number[] = [];
      for (let j = 0; j < forward.length; j += FORWARD_STRIDE) {
        const asked = askedCounts(forward[j + 1]!);
        if (!asked.some((c) => c > 0)) continue;
        terms.push(forward[j]!);
        counts.push(...asked);
      }
      questions.push({
        id: row.id,
        author_id: row.author_id,
        time: Date.parse(row.published),
        tags: JSON.parse(row.tags) as string[],
        knowledge_space_id: row.knowledge_space_id,
        named: [...store.tagsNamedIn(`${row.title}\n${row.description}`)],
        terms: Int32Array.from(terms),
        counts: Uint8Array.from(counts),
      });
    }
    if (rows.length < CHUNK) break;
    after = rows[rows.length - 1]!.id;
    await yieldToEvents();
  }
  questions.sort((a, b) => a.time - b.time || a.id - b.id);

  const solutions = new Map<number, HistorySolution>();
  for (let after = 0; ; ) {
    const rows = store.rows<{ id: number; question_id: number; author_id: number; time: number; accepted_at: number | null }>(
      `select id, question_id, author_id, time, accepted_at from solutions where id > ? and time < ? order by id limit ${CHUNK}`,
      after,
      cutoff,
    );
    for (const row of rows) solutions.set(row.id, { ...row, states: [] });
    if (rows.length < CHUNK) break;
    after = rows[rows.length - 1]!.id;
    await yieldToEvents();
  }
  for (let after = -1, afterTime = 0; ; ) {
    const rows = store.rows<{
      solution_id: number;
      time: number;
      live: number;
      upvotes: number;
      rating: number | null;
      rating_count: number;
    }>(
      `select solution_id, time, live, upvotes, rating, rating_count from solution_states
        where (solution_id, time) > (?, ?) and time < ? order by solution_id, time limit ${CHUNK}`,
      after,
      afterTime,
      cutoff,
    );
    for (const row of rows)
      solutions.get(row.solution_id)?.states.push({
        time: row.time,
        live: row.live === 1,
        upvotes: row.upvotes,
        rating: row.rating,
        rating_count: row.rating_count,
      });
    if (rows.length < CHUNK) break;
    after = rows[rows.length - 1]!.solution_id;
    afterTime = rows[rows.length - 1]!.time;
    await yieldToEvents();
  }
  const forwards = store.rows<{ question_id: number; recipient_id: number; time: number }>(
    'select question_id, recipient_id, time from forwards where time < ? order by time, question_id, recipient_id',
    cutoff,
  );

  const tags = new Map<string, TagFacts & { since: number }>();
  for (const q of questions)
    for (const label of q.tags) {
      const key = label.toLowerCase();
      if (tags.has(key)) continue;
      const tag = store.tag(key);
      tags.set(key, {
        label: tag?.label ?? label,
        excluded_from_suggestions: tag?.excluded_from_suggestions ?? false,
        linked: [...store.linkedTags(key)],
        since: q.time,
      });
    }
  return {
    cutoff,
    questions,
    solutions: [...solutions.values()].filter((s) => s.states.length > 0),
    forwards,
    tags,
    deletedUsers: new Set(store.deletedUsers),
    systemUsers: new Set(store.systemUsers),
    minExperts: store.minExperts,
    word: (id) => store.index.term(id),
  };
}
