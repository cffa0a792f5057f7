/** How many similar questions lend their tags to a suggestion. */
export const SUGGESTION_NEIGHBOURS = 20;

/** The ranking of suggested tags, shared by both backends. */
export function rankSuggestedTags(options: {
  neighbours: ReadonlyArray<{ score: number; tags: readonly string[] }>;
  /** Keys of the tags the text names. */
  named: Iterable<string>;
  tag: (key: string) => { label: string; excluded_from_suggestions: boolean } | undefined;
  limit: number;
}): { total: number; items: string[] } {
  const scores = new Map<string, { label: string; score: number }>();
  const add = (label: string, score: number) => {
    const key = label.toLowerCase();
    const entry = scores.get(key) ?? { label, score: 0 };
    entry.score += score;
    scores.set(key, entry);
  };
  for (const n of options.neighbours) for (const label of n.tags) add(label, n.score);
  // A label named in the text counts like a perfectly similar neighbour.
  for (const key of options.named) add(options.tag(key)?.label ?? key, 1);
  const ranked = [...scores]
    .filter(([key]) => !options.tag(key)?.excluded_from_suggestions)
    .map(([, v]) => v)
    .sort((a, b) => b.score - a.score || a.label.localeCompare(b.label));
  return { total: ranked.length, items: ranked.slice(0, options.limit).map((r) => r.label) };
}
