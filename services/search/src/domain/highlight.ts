import { type SearchField, SearchFieldNames } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import { fieldPart, type MatchKind, type PartKind, queryWords, wordMatcher } from '../core/words.ts';
import { fieldWeights } from './fields.ts';
import { formWeights } from './match.ts';

export interface Highlighting {
  query_field: SearchField;
  id: number;
  fragment: string;
  start: boolean;
  end: boolean;
}

/** Fragments of long texts: about this many characters around the first match. */
const FRAGMENT_LENGTH = 200;
/** Fields in the order a highlight is taken from: the one that weighs most in the ranking first. */
export const highlightOrder: readonly SearchField[] = [...SearchFieldNames].sort((a, b) => fieldWeights[b] - fieldWeights[a]);

interface Hit {
  from: number;
  to: number;
  term: string;
  kind: MatchKind;
}

export type Matcher = ReturnType<typeof wordMatcher>;

/** Where a text has the query's words, in any form the ranking counts (whole, stem, typo, prefix). */
function hits(text: string, match: Matcher): Hit[] {
  const found: Hit[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const matched = match(m[0]);
    if (matched) found.push({ from: m.index, to: m.index + m[0].length, ...matched });
  }
  return found;
}

/** How much a kind of match counts: as in the ranking. */
const kindWeight = (kind: MatchKind) => (kind === 'exact' ? 1 : formWeights[kind]);

/** Distinct query words matched, each by its best form, weighted by its kind. */
const strength = (found: Hit[]) => {
  const best = new Map<string, number>();
  for (const h of found) best.set(h.term, Math.max(best.get(h.term) ?? 0, kindWeight(h.kind)));
  return [...best.values()].reduce((sum, w) => sum + w, 0);
};

function fragment(text: string, found: Hit[], whole: boolean) {
  let from = 0;
  let to = text.length;
  if (!whole && text.length > FRAGMENT_LENGTH) {
    const first = found[0]!;
    from = Math.max(0, first.from - FRAGMENT_LENGTH / 4);
    to = Math.min(text.length, from + FRAGMENT_LENGTH);
    from = Math.max(0, to - FRAGMENT_LENGTH);
    // Cut at word boundaries.
    if (from > 0) from = text.slice(from).search(/\s/) >= 0 ? from + text.slice(from).search(/\s/) + 1 : from;
    if (to < text.length) {
      const space = text.slice(0, to).search(/\s\S*$/);
      if (space > first.to) to = space;
    }
  }
  let out = '';
  let at = from;
  for (const h of found) {
    if (h.from < from || h.to > to) continue;
    out += `${escapeHtml(text.slice(at, h.from))}<em>${escapeHtml(text.slice(h.from, h.to))}</em>`;
    at = h.to;
  }
  out += escapeHtml(text.slice(at, to));
  return { fragment: out.trim(), start: from === 0, end: to === text.length };
}

/** A question's texts as highlighting reads them: the parts with their ids. */
export interface HighlightSource {
  id: number;
  title: string;
  description: string;
  tags: readonly string[];
  parts: (kind: PartKind) => Array<{ id: number; text: string }>;
}

/** The texts of one field of a question. */
function fieldTexts(q: HighlightSource, field: SearchField): Array<{ id: number; text: string }> {
  if (field === 'title') return [{ id: q.id, text: q.title }];
  if (field === 'tags') return [{ id: q.id, text: q.tags.join(', ') }];
  if (field === 'description') return [{ id: q.id, text: q.description }];
  return q.parts(fieldPart[field]!);
}

/** The highlight from the first of `fields` with a match: for parts, the best matching one. */
export function highlightFields(q: HighlightSource, fields: readonly SearchField[], match: Matcher): Highlighting | null {
  for (const field of fields) {
    let best: { id: number; text: string; found: Hit[] } | null = null;
    for (const t of fieldTexts(q, field)) {
      const found = hits(t.text, match);
      if (found.length && (!best || strength(found) > strength(best.found))) best = { ...t, found };
    }
    if (best) return { query_field: field, id: best.id, ...fragment(best.text, best.found, field === 'title' || field === 'tags') };
  }
  return null;
}

/**
 * The highlight of a question read from its stored texts, for an index that cannot say which
 * fields hold a word (Elasticsearch): fields with a whole-word or stem match first, in ranking
 * order, then those with a prefix match. `typoTerms`: the query words whose typos the ranking counted.
 */
export function highlightSource(
  q: HighlightSource,
  query: { query: string; fields: SearchField[]; stop_languages: string[] },
  typoTerms?: ReadonlySet<string>,
  /** The query's matcher (sourceMatcher), shared by the questions of one page. */
  match: Matcher = sourceMatcher(query, typoTerms),
) {
  const words = queryWords(query.query, query.stop_languages);
  if (!words.terms.length) return null;
  const allowed = highlightOrder.filter((f) => query.fields.includes(f));
  const strong = allowed.filter((f) => fieldTexts(q, f).some((t) => hits(t.text, match).some((h) => h.kind !== 'prefix')));
  return highlightFields(q, [...new Set([...strong, ...allowed])], match);
}

/**
 * The matcher of a query for highlightSource, each word of the texts matched once: without an
 * index that knows the words of each form, every word is stemmed, and a page's texts repeat
 * their words (half of the Elasticsearch backend's CPU of a question search was that stemming).
 */
export function sourceMatcher(query: { query: string; stop_languages: string[] }, typoTerms?: ReadonlySet<string>): Matcher {
  const match = wordMatcher(queryWords(query.query, query.stop_languages), typoTerms);
  const known = new Map<string, ReturnType<Matcher>>();
  return (word) => {
    let found = known.get(word);
    if (found === undefined) {
      found = match(word);
      known.set(word, found);
    }
    return found;
  };
}
