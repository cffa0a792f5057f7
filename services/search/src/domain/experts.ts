import { fadedValue, fading } from '../index/expertise.ts';
import type { SearchStore } from '../index/store.ts';
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

/** The tags a text is about, with how surely (0 … 1), best first; and the similar questions that voted. */
export function detectTags(store: SearchStore, query: Pick<ExpertQuery, 'text' | 'language' | 'tags'>) {
  const neighbours = similarTo(store, { text: query.text, language: query.language }, ranking.neighbours).filter(
    (n) => n.score >= ranking.minSimilarity,
  );
  const votes = new Map<string, number>();
  // Similarities add up to at most one full vote: many faint neighbours do not make a tag sure.
  const scale =
    1 /
    Math.max(
      1,
      neighbours.reduce((sum, n) => sum + n.score, 0),
    );
  for (const n of neighbours)
    for (const label of store.index.facets(store.index.slotOf(n.id))?.tags ?? []) {
      const key = label.toLowerCase();
      votes.set(key, (votes.get(key) ?? 0) + n.score * scale);
    }
  for (const key of store.tagsNamedIn(query.text)) votes.set(key, (votes.get(key) ?? 0) + 1);
  const own = new Set((query.tags ?? []).map((t) => t.toLowerCase()).filter((t) => store.tag(t)));
  const tags = [...votes]
    .filter(([key, vote]) => !own.has(key) && vote >= ranking.tagThreshold && store.tag(key) && !store.tag(key)!.excluded_from_suggestions)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, Math.max(0, ranking.maxTags - own.size))
    .map(([key, vote]) => ({ key, weight: Math.min(1, vote) }));
  return { tags: [...[...own].map((key) => ({ key, weight: 1 })), ...tags], neighbours };
}

/** The experts on what a text is about, best first, with the tags used. */
export function findExperts(store: SearchStore, query: ExpertQuery): FoundExperts {
  const { expertise } = store;
  const { tags: detected, neighbours } = detectTags(store, query);
  if (!detected.length) return { tags: [], experts: [] };
  const now = query.now ?? Date.now();
  const fade = fading(now);
  const skip = new Set(query.exclude ?? []);
  const scores = new Map<number, number>();
  const used = new Map<string, number>();
  const addTag = (key: string, weight: number) => {
    if (used.has(key) || weight <= 0) return;
    used.set(key, weight);
    expertise.forEachOnTag(key, (user, value, recommendations) => {
      if (skip.has(user) || store.deletedUsers.has(user) || (query.only && !query.only.has(user))) return;
      const record = value * fade + ranking.recommendationValue * recommendations;
      scores.set(user, (scores.get(user) ?? 0) + weight * record);
    });
  };
  for (const t of detected) addTag(t.key, t.weight);
  if (scores.size < store.minExperts)
    for (const t of detected)
      for (const linked of store.linkedTags(t.key)) if (store.tag(linked)) addTag(linked, ranking.linkedWeight * t.weight);
  for (const [user, score] of scores)
    scores.set(user, score + ranking.activityWeight * Math.log1p((expertise.activity.get(user) ?? 0) * fade));
  // Who answered the most similar questions, for users who know the tags.
  const answered = store.solutionsOn(neighbours.map((n) => n.id));
  for (const n of neighbours)
    for (const s of answered.get(n.id) ?? []) {
      const score = scores.get(s.author_id);
      if (score === undefined) continue;
      scores.set(s.author_id, score + ranking.similarWeight * n.score * fadedValue(s, now));
    }
  const tagKeys = new Set(used.keys());
  const label = (key: string) => store.tag(key)?.label ?? key;
  const experts = [...scores]
    .filter(([, score]) => score > 0)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, query.limit)
    .map(([user_id, score]) => {
      const details = store.expertRecord(user_id, tagKeys);
      return {
        user_id,
        score: Math.round(score * 1000) / 1000,
        details: { ...details, expert_tags: details.expert_tags.map((key) => ({ label: label(key) })) },
      };
    });
  return { tags: [...used.keys()].map(label), experts };
}
