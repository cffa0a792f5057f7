import { fadedValue, fading, type SolutionFacts } from '../local/expertise.ts';
import type { SearchStore } from '../local/store.ts';
import { similarTo } from './similarity.ts';

/**
 * Expert search: which existing tags a text is about, and who knows those tags best.
 *
 * Tags: those the text names, and the tags of the questions most similar to it, each voting with
 * its similarity; a tag is used when its votes reach `ranking.tagThreshold` (never a new tag; none
 * when nothing fits). Experts: the users with a record on those tags (expertise.ts: solutions
 * valued by acceptance, upvotes and ratings, fading with age; recommendations), scored by that
 * record weighted by how surely the text is about each tag, plus what they answered on the most
 * similar questions, plus how much they answer at all. When fewer than `min_experts` users come
 * from the tags, linked tags widen the pool at half weight.
 */

/**
 * The ranking's parameters, tuned on the beer site (bench/experts-quality.ts; TUNE='{…}' tries
 * others there).
 */
export const ranking = {
  /** How many similar questions vote on the tags, and lend their answerers. */
  neighbours: 30,
  /** Similar questions below this similarity do not vote: a text unlike anything gets no tags. */
  minSimilarity: 0.05,
  /** A tag is used when its votes (a named tag has 1 already) reach this. */
  tagThreshold: 0.1,
  maxTags: 8,
  /** A linked tag counts this much of the tag it is linked to. */
  linkedWeight: 0.5,
  /** One recommendation (forward) counts like a solution of this value. */
  recommendationValue: 1.5,
  /** Weight of what a user answered on the similar questions, beside their record on the tags. */
  similarWeight: 1,
  /** Weight of log(1 + a user's record over all tags): people who answer at all answer more. */
  activityWeight: 2,
};

export interface ExpertQuery {
  /** The text the experts should know about (a question's title and description, say). */
  text: string;
  language?: string;
  /** Tags the text certainly has (a question's own tags): used whatever the votes say. */
  tags?: readonly string[];
  limit: number;
  /** Users never to return (the poser of the question, say). */
  exclude?: readonly number[];
  /** When given, only these users (the members of a closed knowledge space). */
  only?: ReadonlySet<number>;
  /** The time recency is measured from (ms); now by default. */
  now?: number;
}

export interface ExpertDetails {
  solution_count: number;
  average_rating: number | null;
  recommendation_count: number;
  expert_tags: Array<{ label: string }>;
}

export interface FoundExperts {
  /** Labels of the tags used, the text's own first, linked ones last. */
  tags: string[];
  experts: Array<{ user_id: number; score: number; details: ExpertDetails }>;
}

/** What the two index backends know of a tag, for choosing tags. */
export interface TagFacts {
  excluded_from_suggestions: boolean;
}

/**
 * The tags a text is about, with how surely (0 … 1), best first: its own tags (those that exist)
 * first, then the tags the similar questions vote for (each with its similarity, a full vote at
 * most in all) and the tags the text names (a vote of 1 each). Shared by both backends.
 */
export function chooseTags(options: {
  neighbours: ReadonlyArray<{ score: number; tags: readonly string[] }>;
  named: Iterable<string>;
  own: readonly string[];
  tag: (key: string) => TagFacts | undefined;
}): Array<{ key: string; weight: number }> {
  const votes = new Map<string, number>();
  // Similarities add up to at most one full vote: many faint neighbours do not make a tag sure.
  const scale =
    1 /
    Math.max(
      1,
      options.neighbours.reduce((sum, n) => sum + n.score, 0),
    );
  for (const n of options.neighbours)
    for (const label of n.tags) {
      const key = label.toLowerCase();
      votes.set(key, (votes.get(key) ?? 0) + n.score * scale);
    }
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

/**
 * The experts' scores on the chosen tags, best first (at most `limit`), and the tags used (the
 * chosen ones, and linked ones when the chosen give fewer than `minExperts` users). Shared by both
 * backends, which read the records in their own way.
 */
export function scoreExperts(options: {
  tags: ReadonlyArray<{ key: string; weight: number }>;
  /** Each user's record on a tag: the faded value of their solutions and their recommendations. */
  eachOnTag: (key: string, visit: (user: number, value: number, recommendations: number) => void) => void;
  linkedTags: (key: string) => Iterable<string>;
  tagExists: (key: string) => boolean;
  minExperts: number;
  eligible: (user: number) => boolean;
  /** A user's record over all tags (before fading). */
  activity: (user: number) => number;
  /** The similar questions, with the published solutions on them. */
  neighbours: ReadonlyArray<{ score: number; solutions: ReadonlyArray<SolutionFacts & { author_id: number }> }>;
  now: number;
  limit: number;
}): { experts: Array<[user: number, score: number]>; used: string[] } {
  const fade = fading(options.now);
  const scores = new Map<number, number>();
  const used = new Map<string, number>();
  const addTag = (key: string, weight: number) => {
    if (used.has(key) || weight <= 0) return;
    used.set(key, weight);
    options.eachOnTag(key, (user, value, recommendations) => {
      if (!options.eligible(user)) return;
      const record = value * fade + ranking.recommendationValue * recommendations;
      scores.set(user, (scores.get(user) ?? 0) + weight * record);
    });
  };
  for (const t of options.tags) addTag(t.key, t.weight);
  if (scores.size < options.minExperts)
    for (const t of options.tags)
      for (const linked of options.linkedTags(t.key)) if (options.tagExists(linked)) addTag(linked, ranking.linkedWeight * t.weight);
  for (const [user, score] of scores) scores.set(user, score + ranking.activityWeight * Math.log1p(options.activity(user) * fade));
  // Who answered the most similar questions, for users who know the tags.
  for (const n of options.neighbours)
    for (const s of n.solutions) {
      const score = scores.get(s.author_id);
      if (score === undefined) continue;
      scores.set(s.author_id, score + ranking.similarWeight * n.score * fadedValue(s, options.now));
    }
  const experts = [...scores]
    .filter(([, score]) => score > 0)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, options.limit)
    .map(([user, score]) => [user, Math.round(score * 1000) / 1000] as [number, number]);
  return { experts, used: [...used.keys()] };
}

/** The experts on what a text is about, best first, with the tags used (the local index). */
export function findExperts(store: SearchStore, query: ExpertQuery): FoundExperts {
  const { expertise } = store;
  const neighbours = similarTo(store, { text: query.text, language: query.language }, ranking.neighbours).filter(
    (n) => n.score >= ranking.minSimilarity,
  );
  const tags = chooseTags({
    neighbours: neighbours.map((n) => ({ score: n.score, tags: store.index.facets(store.index.slotOf(n.id))?.tags ?? [] })),
    named: store.tagsNamedIn(query.text),
    own: query.tags ?? [],
    tag: (key) => store.tag(key),
  });
  if (!tags.length) return { tags: [], experts: [] };
  const answered = store.solutionsOn(neighbours.map((n) => n.id));
  const { experts, used } = scoreExperts({
    tags,
    eachOnTag: (key, visit) => expertise.forEachOnTag(key, visit),
    linkedTags: (key) => store.linkedTags(key),
    tagExists: (key) => store.tag(key) !== undefined,
    minExperts: store.minExperts,
    eligible: (user) => !query.exclude?.includes(user) && !store.deletedUsers.has(user) && (!query.only || query.only.has(user)),
    activity: (user) => expertise.activity.get(user) ?? 0,
    neighbours: neighbours.map((n) => ({ score: n.score, solutions: answered.get(n.id) ?? [] })),
    now: query.now ?? Date.now(),
    limit: query.limit,
  });
  const tagKeys = new Set(used);
  const label = (key: string) => store.tag(key)?.label ?? key;
  return {
    tags: used.map(label),
    experts: experts.map(([user_id, score]) => {
      const details = store.expertRecord(user_id, tagKeys);
      return { user_id, score, details: { ...details, expert_tags: details.expert_tags.map((key) => ({ label: label(key) })) } };
    }),
  };
}
