import type { SearchStore } from '../index/store.ts';
import { similarTo } from './similarity.ts';
import { phrase, queryTerms } from './terms.ts';

/** How many similar questions lend their tags to a suggestion. */
const NEIGHBOURS = 20;

/**
 * Existing tags for a question text, best first, never new ones: tags whose label occurs in the
 * text as a word or phrase, plus the tags of the most similar questions weighted by their
 * similarity. Tags excluded from suggestions never appear.
 */
export function suggestTags(store: SearchStore, text: string, limit: number): { total: number; items: string[] } {
  const scores = new Map<string, { label: string; score: number }>();
  const add = (label: string, score: number) => {
    const key = label.toLowerCase();
    const entry = scores.get(key) ?? { label, score: 0 };
    entry.score += score;
    scores.set(key, entry);
  };
  for (const s of similarTo(store, { text }, NEIGHBOURS)) for (const label of store.question(s.id)?.tags ?? []) add(label, s.score);
  // A label named in the text counts like a perfectly similar neighbour.
  const lower = ` ${text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
  const words = queryTerms(text, []);
  if (words.length) {
    const rows = store.all<{ label: string; tags: string }>(
      `select t.label, (select tags from questions where id = t.question_id) as tags from question_tags t
        where t.label in (${words.map(() => '?').join(',')}) group by t.label`,
      ...words,
    );
    for (const row of rows) {
      const original = (JSON.parse(row.tags) as string[]).find((l) => l.toLowerCase() === row.label) ?? row.label;
      if (lower.includes(` ${row.label} `)) add(original, 1);
    }
  }
  const excluded = new Set(
    store.all<{ label: string }>('select lower(label) as label from tags where excluded_from_suggestions = 1').map((r) => r.label),
  );
  const ranked = [...scores]
    .filter(([key]) => !excluded.has(key))
    .map(([, v]) => v)
    .sort((a, b) => b.score - a.score || a.label.localeCompare(b.label));
  return { total: ranked.length, items: ranked.slice(0, limit).map((r) => r.label) };
}

/** Titles of visible questions containing every word of the text, the last one as a prefix. */
export function autocomplete(store: SearchStore, text: string, limit: number): { total: number; items: string[] } {
  const terms = queryTerms(text, ['en']);
  if (!terms.length || limit === 0) return { total: 0, items: [] };
  const expression = `{title} : (${terms.map((t, i) => (i === terms.length - 1 ? `${phrase(t)}*` : phrase(t))).join(' AND ')})`;
  const visible = `question_fts match ? and q.is_published = 1 and q.is_deleted = 0
    and (q.knowledge_space_id is null or not exists (select 1 from spaces s where s.id = q.knowledge_space_id and s.is_closed = 1))`;
  const items = store
    .all<{ title: string }>(
      `select q.title from question_fts f join questions q on q.id = f.rowid where ${visible} order by bm25(question_fts, 1, 0, 0, 0, 0, 0) limit ?`,
      expression,
      limit,
    )
    .map((r) => r.title);
  const total =
    store.get<{ n: number }>(
      `select count(*) as n from (select 1 from question_fts f join questions q on q.id = f.rowid where ${visible} limit 1000)`,
      expression,
    )?.n ?? 0;
  return { total, items };
}
