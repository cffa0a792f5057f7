import type { SearchField } from '@kn/contracts';
import { foldDiacritics } from '@kn/similarity';
import type { PartKind, SearchStore } from '../index/store.ts';
import { queryTerms } from './terms.ts';

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
const order: SearchField[] = ['title', 'tags', 'description', 'solutions', 'comments', 'attachments'];
const partField: Record<PartKind, SearchField> = { solution: 'solutions', comment: 'comments', attachment: 'attachments' };

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

interface Hit {
  from: number;
  to: number;
  term: string;
  exact: boolean;
}

/** Where the query's words (whole, or as a 3+ character prefix) occur in a text. */
function hits(text: string, terms: readonly string[]): Hit[] {
  const found: Hit[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = foldDiacritics(m[0].toLowerCase());
    const exact = terms.find((t) => t === word);
    const prefix = exact ?? terms.find((t) => t.length >= 3 && word.startsWith(t));
    if (prefix) found.push({ from: m.index, to: m.index + m[0].length, term: prefix, exact: exact !== undefined });
  }
  return found;
}

/** Distinct words matched, whole words counting ten times a prefix (as in the ranking). */
const strength = (found: Hit[]) => {
  const exact = new Set(found.filter((h) => h.exact).map((h) => h.term));
  const prefix = new Set(found.filter((h) => !h.exact).map((h) => h.term));
  return exact.size + 0.1 * prefix.size;
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

/**
 * The highlight of one question for a query: from the most weighted field with a match (within
 * the allowed fields), and for solutions, comments and attachments from the best matching one.
 */
export function highlight(
  store: SearchStore,
  id: number,
  query: { query: string; fields: SearchField[]; stop_languages: string[] },
): Highlighting | null {
  const q = store.question(id);
  if (!q) return null;
  const terms = queryTerms(query.query, query.stop_languages);
  if (!terms.length) return null;
  const candidates: Array<{ field: SearchField; id: number; text: string; found: Hit[] }> = [];
  const consider = (field: SearchField, ownerId: number, text: string) => {
    if (!query.fields.includes(field) || !text) return;
    const found = hits(text, terms);
    if (found.length) candidates.push({ field, id: ownerId, text, found });
  };
  consider('title', id, q.title);
  consider('tags', id, q.tags.join(', '));
  consider('description', id, q.description);
  for (const part of store.parts(id)) consider(partField[part.kind], part.id, part.text);
  if (!candidates.length) return null;
  // Whole words before prefixes, then the field order, then the part with most matched words.
  const rank = (c: (typeof candidates)[number]) => [c.found.some((h) => h.exact) ? 0 : 1, order.indexOf(c.field), -strength(c.found)];
  candidates.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
  const best = candidates[0]!;
  return { query_field: best.field, id: best.id, ...fragment(best.text, best.found, best.field === 'title' || best.field === 'tags') };
}
