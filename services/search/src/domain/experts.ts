import { FEATURE_COUNT, FEATURES, type FeatureName } from './expert-model.ts';
import { DAY, fading, HALF_LIFE_DAYS, type TagRecord, type UserRecord } from './expertise.ts';
import { topK } from './ranking.ts';

/**
 * Expert search: which existing tags a text is about, who could answer it, and how likely each of
 * them is to be the one who does.
 *
 * Tags: those the text names, and the tags of the questions most similar to it, each voting with
 * its similarity; a tag is used when its votes reach `expertRanking.tagThreshold` (never a new tag; none
 * when nothing fits). Candidates: the people with a record on those tags (expertise.ts: solutions
 * valued by acceptance, upvotes and ratings, fading with age; recommendations), with the linked
 * tags at half weight when fewer than `min_experts` come from the tags, and the people who answered
 * the most similar questions. Each candidate's evidence (`FEATURES`) is scored with the network's
 * model (expert-model.ts: weights learned from its own past, or the defaults); the best first.
 *
 * The evidence comes through one interface (`ExpertEvidence`) that the local index, the
 * Elasticsearch backend and the fit's replay of the past each supply: one ranking for all three.
 */
export const expertRanking: Readonly<ExpertRanking> = Object.freeze({
  /** How many similar questions vote on the tags and lend their answerers. */
  neighbours: 30,
  /** Similar questions below this similarity do not count: a text unlike anything gets no tags. */
  minSimilarity: 0.05,
  /** A tag is used when its votes (a named tag has 1 already) reach this. */
  tagThreshold: 0.1,
  maxTags: 8,
  /** A linked tag counts this much of the tag it is linked to. */
  linkedWeight: 0.5,
  /** One recommendation (forward) counts like a solution of this value. */
  recommendationValue: 1.5,
  /** People with a record on the tags taken as candidates, best record first. */
  tagCandidates: 100,
  /** A similar question at least this similar brings the people who answered it as candidates (below, it adds to those there are). */
  candidateSimilarity: 0.15,
  /** Smoothing of shares and rates: as if this many more answers had the network's average. */
  prior: 2,
  /** Half-lives (days) of the two recency features. */
  recentYear: 365,
  recentMonth: 30,
});
export type ExpertRanking = Record<
  | 'neighbours'
  | 'minSimilarity'
  | 'tagThreshold'
  | 'maxTags'
  | 'linkedWeight'
  | 'recommendationValue'
  | 'tagCandidates'
  | 'candidateSimilarity'
  | 'prior'
  | 'recentYear'
  | 'recentMonth',
  number
>;
/** Added to sums before their logarithm: nothing counts a little, not minus infinity. */
const FLOOR = 0.01;

/** A question similar to the query, with what expert search needs of it. */
export interface Neighbour {
  id: number;
  /** Cosine similarity of what was asked (title, description, tags) with the query, in [0, 1]. */
  score: number;
  /** When it was published (ms): the stable order of equally similar questions. */
  time: number;
  tags: readonly string[];
  knowledge_space_id: number | null;
  /** Its live solutions: who wrote them, when, and what they are worth (expertise.ts solutionValue). */
  solutions: ReadonlyArray<{ author_id: number; time: number; value: number }>;
}

/** What the ranking reads of a tag. */
export interface TagFacts {
  label: string;
  excluded_from_suggestions: boolean;
  /** Lower-case labels of the tags linked to it, in either direction. */
  linked: readonly string[];
}

/** The users with a record on one tag (read in place: a popular tag has thousands). */
export interface TagUsers {
  /** Live solutions on questions with the tag, of everyone. */
  answers: number;
  forEach(visit: (user: number, record: TagRecord) => void): void;
  has(user: number): boolean;
}

/** A user's record over all tags, and whether they are deleted or a system user. */
export type UserFacts = UserRecord & { deleted: boolean; system: boolean };

/** Deleted users and system users (an importer's placeholder author, a bot) are never experts: they cannot answer. */
export const cannotAnswer = (user: UserFacts | undefined) => !!user && (user.deleted || user.system);

/** How a user responded to earlier routings: sent (with the answer window closed), answered within it. */
export interface RoutingResponse {
  routed: number;
  answered: number;
}

/**
 * The evidence expert search reads, as one network knows it now (or, in the fit, knew it then).
 * Implemented by the local index (local/evidence.ts), the Elasticsearch backend and the fit's replay. A
 * backend's evidence for a caller (`SearchBackend.evidence(hidden)`) leaves out everything of the
 * closed knowledge spaces the caller may not read: their questions, the records earned there, and
 * the tags used only there.
 */
export interface ExpertEvidence {
  /** The network's clock (ms): when its latest question was published. */
  clock(): Promise<number>;
  /**
   * The live published questions most similar to a text, best first (at most `limit`); when the
   * text is a question's (`self`), as if that question were not in the index.
   */
  neighbours(text: string, language: string | undefined, limit: number, self?: number): Promise<Neighbour[]>;
  /** Lower-case labels of the tags the text names (all their words in a row). */
  namedTags(text: string): Promise<Set<string>>;
  /** The tags the network has among these lower-case labels. */
  tags(keys: readonly string[]): Promise<Map<string, TagFacts>>;
  /** Each user's record on each of these tags, and how many live solutions each tag has in all. */
  onTags(keys: readonly string[]): Promise<Map<string, TagUsers>>;
  /** Live solutions of everyone. */
  answers(): Promise<number>;
  /**
   * Who answered the asker's earlier questions: per user, their live solutions on the asker's live
   * questions valued as expertise values them (solutionValue), fading with age to `now`.
   */
  askerRecord(asker: number, now: number): Promise<Map<number, number>>;
  users(ids: readonly number[]): Promise<Map<number, UserFacts>>;
  minExperts(): Promise<number>;
  /**
   * The live questions each user has live solutions on: at most ANSWERED_LIMIT per user, the
   * latest answered first (latestAnswered).
   */
  answered(users: readonly number[]): Promise<Map<number, number[]>>;
  /**
   * How close in meaning a question is to the query (the cosine of their embeddings), when expert
   * search has the query's meaning (semantic.ts withMeaning); undefined for a question not embedded.
   */
  closeness?: (questionId: number) => number | undefined;
}

/** The answered questions per person that the closeness of their answers to a query is taken over. */
export const ANSWERED_LIMIT = 100;

/** The ANSWERED_LIMIT latest of a person's answered questions (ties: the higher id first). */
export const latestAnswered = (answered: ReadonlyArray<{ question_id: number; time: number }>) =>
  [...answered]
    .sort((a, b) => b.time - a.time || b.question_id - a.question_id)
    .slice(0, ANSWERED_LIMIT)
    .map((a) => a.question_id);

/** How many of a person's answers closest to the query count towards answered_meaning. */
const CLOSEST_ANSWERS = 3;

/**
 * How close a person's answers are to the query: the mean cosine of their CLOSEST_ANSWERS answered
 * questions closest to it (fewer when they answered fewer; 0 without any embedded). A profile of
 * everything someone answered, read through the meaning: it finds the person whose answers are
 * about the query's topic when no question like it was asked in the same words.
 */
function answeredMeaning(ids: readonly number[] | undefined, closeness: (questionId: number) => number | undefined): number {
  const best: number[] = [];
  for (const id of ids ?? []) {
    const c = closeness(id);
    if (c === undefined) continue;
    if (best.length < CLOSEST_ANSWERS) best.push(c);
    else {
      const lowest = best.indexOf(Math.min(...best));
      if (c > best[lowest]!) best[lowest] = c;
    }
  }
  return best.length ? best.reduce((sum, c) => sum + Math.max(0, c), 0) / best.length : 0;
}

export interface ExpertQuery {
  /** The text the experts should know about (a question's title and description, say). */
  text: string;
  language?: string;
  /** Tags the text certainly has (a question's own tags): used whatever the votes say. */
  tags?: readonly string[];
  limit: number;
  /** Users never to return (the poser of the question, say). */
  exclude?: readonly number[];
  /** Who asks (the question's poser, or who searches): the people who answered them before are evidence. */
  asker?: number;
  /** The question the text is (when it is one): never its own neighbour, whether or not it is indexed yet. */
  question_id?: number;
  /** When given, only these users (the members of a closed knowledge space). */
  only?: ReadonlySet<number>;
  /** The time recency is measured from (ms); the network's clock by default. */
  now?: number;
}

/** Why a person was found: the tags they have a record on, with how surely the text is about each, and similar questions they answered. */
export interface ExpertReasons {
  tags: Array<{ key: string; weight: number }>;
  similar: Array<{ id: number; score: number; knowledge_space_id: number | null }>;
}

export interface RankedExperts {
  /** Lower-case labels of the tags used, the text's own first, linked ones last; with their labels. */
  tags: Array<{ key: string; label: string; weight: number }>;
  experts: Array<{ user_id: number; score: number; reasons: ExpertReasons }>;
  /** Every candidate with their features (FEATURE_COUNT per candidate, row-major): what the fit learns from. */
  candidates: number[];
  rows: Float64Array;
}

/**
 * The tags a text is about, with how surely (0 … 1), best first: its own tags (those that exist)
 * first, then the tags the similar questions vote for (each with its similarity, a full vote at
 * most in all) and the tags the text names (a vote of 1 each).
 */
export function chooseTags(
  options: {
    neighbours: ReadonlyArray<{ score: number; tags: readonly string[] }>;
    named: Iterable<string>;
    own: readonly string[];
    tag: (key: string) => { excluded_from_suggestions: boolean } | undefined;
  },
  ranking: Readonly<ExpertRanking>,
): Array<{ key: string; weight: number }> {
  const votes = new Map<string, number>();
  // Similarities add up to at most one full vote: many faint neighbours do not make a tag sure.
  const scale =
    1 /
    Math.max(
      1,
      options.neighbours.reduce((sum, n) => sum + n.score, 0),
    );
  for (const n of options.neighbours)
    for (const label of new Set(n.tags.map((t) => t.toLowerCase()))) votes.set(label, (votes.get(label) ?? 0) + n.score * scale);
  for (const key of options.named) votes.set(key, (votes.get(key) ?? 0) + 1);
  const own = new Set(options.own.map((t) => t.toLowerCase()).filter((t) => options.tag(t)));
  const voted = [...votes]
    .filter(
      ([key, vote]) => !own.has(key) && vote >= ranking.tagThreshold && options.tag(key) && !options.tag(key)!.excluded_from_suggestions,
    )
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, Math.max(0, ranking.maxTags - own.size))
    .map(([key, vote]) => ({ key, weight: Math.min(1, vote) }));
  return [...[...own].map((key) => ({ key, weight: 1 })), ...voted];
}

/** Σ over answer times of 2^(−age / halfLife days); answers after `now` count as now. */
function recency(times: ArrayLike<number>, now: number, halfLife: number): number {
  let sum = 0;
  for (let i = times.length - 1; i >= 0; i--) {
    const weight = 2 ** (-Math.max(0, now - times[i]!) / DAY / halfLife);
    if (weight < 1e-9) break;
    sum += weight;
  }
  return sum;
}

/** What one candidate brings, before it becomes features. */
interface Candidate {
  user: number;
  /** Σ over the tags of weight · (faded value + recommendations). */
  record: number;
  /** Σ over the tags of weight · live solutions. */
  onTags: number;
  /** Σ over the similar questions of similarity · faded value of their solutions there. */
  similar: number;
  /** Faded value of their solutions on the asker's earlier questions. */
  asker: number;
  tags: Array<{ key: string; weight: number }>;
  answered: Array<{ id: number; score: number; knowledge_space_id: number | null }>;
  /** answeredMeaning of their answered questions (0 without the query's meaning). */
  meaning: number;
}

/** A candidate's features, in FEATURES order (each well scaled: logarithms of counts, shares and rates). */
export function features(
  c: Candidate,
  user: UserRecord | undefined,
  response: RoutingResponse | undefined,
  network: { tagShare: number },
  now: number,
  ranking: Readonly<ExpertRanking>,
): number[] {
  const answers = user?.answers ?? 0;
  const times = user?.times ?? [];
  const value: Record<FeatureName, number> = {
    tag_record: Math.log1p(c.record),
    tag_share: Math.log((c.onTags + ranking.prior * (network.tagShare + FLOOR)) / (answers + ranking.prior)),
    similar_answers: Math.log(FLOOR + c.similar),
    answered_meaning: c.meaning,
    asker_record: Math.log1p(c.asker),
    answers: Math.log1p(answers),
    recent_year: Math.log(FLOOR + recency(times, now, ranking.recentYear)),
    recent_month: Math.log(FLOOR + recency(times, now, ranking.recentMonth)),
    acceptance: Math.log(((user?.accepted ?? 0) + 1) / (answers + 3)),
    // 0 for someone never routed: unknown is neither good nor bad.
    routing_response: response ? Math.log(((response.answered + 1) / (response.routed + 2)) * 2) : 0,
  };
  // Rounded: sums taken in another order (content that arrived in another order) give the same features.
  return FEATURES.map((f) => Math.round(value[f] * 1e9) / 1e9);
}

const rounded = (score: number) => Math.round(score * 1e9) / 1e9;

/**
 * The experts on a text, best first (at most `limit`), with every candidate's features. Shared by
 * every backend and by the fit.
 */
export async function rankExperts(
  evidence: ExpertEvidence,
  query: ExpertQuery,
  context: {
    weights: ArrayLike<number>;
    responses: (users: readonly number[]) => Promise<Map<number, RoutingResponse>>;
    /** The ranking's parameters: expertRanking unless a benchmark tries others. */
    ranking?: Readonly<ExpertRanking>;
  },
): Promise<RankedExperts> {
  const ranking = context.ranking ?? expertRanking;
  const empty: RankedExperts = { tags: [], experts: [], candidates: [], rows: new Float64Array(0) };
  const now = query.now ?? (await evidence.clock());
  const neighbours = (await evidence.neighbours(query.text, query.language, ranking.neighbours, query.question_id)).filter(
    (n) => n.score >= ranking.minSimilarity,
  );
  const named = await evidence.namedTags(query.text);
  const ownKeys = (query.tags ?? []).map((t) => t.toLowerCase());
  const known = await evidence.tags([...new Set([...neighbours.flatMap((n) => n.tags.map((t) => t.toLowerCase())), ...named, ...ownKeys])]);
  const chosen = chooseTags({ neighbours, named, own: ownKeys, tag: (key) => known.get(key) }, ranking);
  if (!chosen.length) return empty;

  const skip = new Set(query.exclude ?? []);
  const eligible = (user: number) => !skip.has(user) && (!query.only || query.only.has(user));
  const fade = fading(now);
  // Everyone with a record on the tags, in flat arrays: a popular tag has thousands of them.
  const slots = new Map<number, number>();
  const people: number[] = [];
  let records = new Float64Array(64);
  let counts = new Float64Array(64);
  const slotOf = (user: number) => {
    let slot = slots.get(user);
    if (slot === undefined) {
      slot = people.length;
      people.push(user);
      slots.set(user, slot);
      if (slot >= records.length) {
        const grown = [new Float64Array(records.length * 2), new Float64Array(records.length * 2)] as const;
        grown[0].set(records);
        grown[1].set(counts);
        [records, counts] = grown;
      }
    }
    return slot;
  };
  const used: Array<{ key: string; weight: number; users: TagUsers | undefined }> = [];
  let tagAnswers = 0;
  const addTags = async (tags: ReadonlyArray<{ key: string; weight: number }>) => {
    const fresh = tags.filter((t) => !used.some((u) => u.key === t.key) && t.weight > 0);
    const found = await evidence.onTags(fresh.map((t) => t.key));
    for (const { key, weight } of fresh) {
      const users = found.get(key);
      used.push({ key, weight, users });
      tagAnswers += weight * (users?.answers ?? 0);
      users?.forEach((user, r) => {
        if (!eligible(user)) return;
        const slot = slotOf(user);
        records[slot]! += weight * (r.value * fade + ranking.recommendationValue * r.recommendations);
        counts[slot]! += weight * r.count;
      });
    }
  };
  await addTags(chosen);
  const minExperts = await evidence.minExperts();
  // Deleted and system users do not count; they are few, so only a pool near the minimum is looked at.
  const enough = async () => {
    if (people.length >= 2 * minExperts + 10) return true;
    const facts = await evidence.users(people);
    return people.length - [...facts.values()].filter(cannotAnswer).length >= minExperts;
  };
  if (!(await enough())) {
    const linked = chosen.flatMap((t) => (known.get(t.key)?.linked ?? []).map((key) => ({ key, weight: ranking.linkedWeight * t.weight })));
    const linkedKnown = await evidence.tags([...new Set(linked.map((l) => l.key))]);
    for (const [key, facts] of linkedKnown) known.set(key, facts);
    await addTags(linked.filter((l) => linkedKnown.has(l.key)));
  }
  // The best records on the tags, and everyone who answered the similar questions.
  const pool = new Map<number, Candidate>();
  const candidate = (user: number) => {
    let c = pool.get(user);
    if (!c) {
      const slot = slots.get(user);
      c = {
        user,
        record: slot === undefined ? 0 : records[slot]!,
        onTags: slot === undefined ? 0 : counts[slot]!,
        similar: 0,
        asker: 0,
        tags: used.filter((t) => t.users?.has(user)).map(({ key, weight }) => ({ key, weight })),
        answered: [],
        meaning: 0,
      };
      pool.set(user, c);
    }
    return c;
  };
  for (const slot of topK(
    people.keys(),
    (a, b) => rounded(records[a]!) - rounded(records[b]!) || people[b]! - people[a]!,
    ranking.tagCandidates,
  ))
    candidate(people[slot]!);
  for (const n of neighbours)
    for (const s of n.solutions) {
      if (!eligible(s.author_id) || (!pool.has(s.author_id) && n.score < ranking.candidateSimilarity)) continue;
      const c = candidate(s.author_id);
      c.similar += n.score * s.value * 2 ** (-Math.max(0, now - s.time) / DAY / HALF_LIFE_DAYS);
      if (!c.answered.some((a) => a.id === n.id)) c.answered.push({ id: n.id, score: n.score, knowledge_space_id: n.knowledge_space_id });
    }
  // Who answered the asker before is evidence for the candidates on the topic (those who answer
  // one person's questions tend to answer the next), never a candidate of its own: an expert on
  // this text has a record on its tags or answered questions like it.
  if (query.asker !== undefined)
    for (const [user, value] of await evidence.askerRecord(query.asker, now)) {
      const c = user === query.asker ? undefined : pool.get(user);
      if (c) c.asker = value;
    }
  const closeness = evidence.closeness;
  if (closeness)
    for (const [user, ids] of await evidence.answered([...pool.keys()])) {
      const c = pool.get(user);
      if (c) c.meaning = answeredMeaning(ids, closeness);
    }
  const users = await evidence.users([...pool.keys()]);
  const responses = await context.responses([...pool.keys()]);
  const total = await evidence.answers();
  const network = { tagShare: tagAnswers / Math.max(1, total) };
  const ids = [...pool.keys()].filter((u) => !cannotAnswer(users.get(u))).sort((a, b) => a - b);
  const rows = new Float64Array(ids.length * FEATURE_COUNT);
  const scored = ids.map((user, j) => {
    const row = features(pool.get(user)!, users.get(user), responses.get(user), network, now, ranking);
    rows.set(row, j * FEATURE_COUNT);
    let score = 0;
    for (let i = 0; i < FEATURE_COUNT; i++) score += row[i]! * context.weights[i]!;
    const facts = users.get(user);
    return { user, score: rounded(score), answers: facts?.answers ?? 0, last: facts?.times[facts.times.length - 1] ?? 0 };
  });
  // Ties go to who answers more, then more recently, then the lower id: never the order things arrived in.
  scored.sort((a, b) => b.score - a.score || b.answers - a.answers || b.last - a.last || a.user - b.user);
  const label = (key: string) => known.get(key)?.label ?? key;
  return {
    tags: used.map(({ key, weight }) => ({ key, label: label(key), weight })),
    experts: scored.slice(0, Math.max(0, query.limit)).map(({ user, score }) => {
      const c = pool.get(user)!;
      return {
        user_id: user,
        score: Math.round(score * 1000) / 1000,
        reasons: {
          tags: [...c.tags].sort((a, b) => b.weight - a.weight || a.key.localeCompare(b.key)),
          similar: [...c.answered].sort((a, b) => b.score - a.score || a.id - b.id),
        },
      };
    }),
    candidates: ids,
    rows,
  };
}
