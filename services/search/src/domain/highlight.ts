import type { SearchField } from '@kn/contracts';
import { foldDiacritics } from '@kn/similarity';
import { FIELDS } from '../local/postings.ts';
import type { PartKind, SearchStore } from '../local/store.ts';
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
const fieldPart: Partial<Record<SearchField, PartKind>> = { solutions: 'solution', comments: 'comment', attachments: 'attachment' };

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
export function highlightFields(q: HighlightSource, fields: readonly SearchField[], terms: readonly string[]): Highlighting | null {
  for (const field of fields) {
    let best: { id: number; text: string; found: Hit[] } | null = null;
    for (const t of fieldTexts(q, field)) {
      const found = hits(t.text, terms);
      if (found.length && (!best || strength(found) > strength(best.found))) best = { ...t, found };
    }
    if (best) return { query_field: field, id: best.id, ...fragment(best.text, best.found, field === 'title' || field === 'tags') };
  }
  return null;
}

/**
 * The highlight of a question read from its stored texts, for an index that cannot say which
 * fields hold a word (Elasticsearch): fields with a whole-word match first, in ranking order, then
 * those with a prefix match, as `highlight` decides.
 */
export function highlightSource(q: HighlightSource, query: { query: string; fields: SearchField[]; stop_languages: string[] }) {
  const terms = queryTerms(query.query, query.stop_languages);
  if (!terms.length) return null;
  const allowed = order.filter((f) => query.fields.includes(f));
  const whole = allowed.filter((f) => fieldTexts(q, f).some((t) => hits(t.text, terms).some((h) => h.exact)));
  return highlightFields(q, [...new Set([...whole, ...allowed])], terms);
}

/**
 * The highlights of questions for a query: each from the most weighted field with a match (within
 * the allowed fields), and for solutions, comments and attachments from the best matching one.
 * The index says which fields hold a query word (whole first, then a word a prefix begins), so
 * only those texts are read.
 */
export function highlight(
  store: SearchStore,
  ids: readonly number[],
  query: { query: string; fields: SearchField[]; stop_languages: string[] },
): Array<Highlighting | null> {
  const { index } = store;
  const terms = queryTerms(query.query, query.stop_languages);
  const exact = new Set(terms.map((t) => index.termId(t)).filter((w) => w >= 0));
  const prefixed = new Set(terms.flatMap((t) => (t.length >= 3 ? index.expand(t) : [])).filter((w) => !exact.has(w)));
  const allowed = FIELDS.reduce((mask, f, i) => (query.fields.includes(f) ? mask | (1 << i) : mask), 0);
  const inFields = (mask: number) => order.filter((f) => mask & allowed & (1 << FIELDS.indexOf(f)));
  return ids.map((id) => {
    const slot = index.slotOf(id);
    const q = slot >= 0 && terms.length ? store.question(id) : undefined;
    if (!q) return null;
    const candidates = [...new Set([...inFields(index.fieldsWith(slot, exact)), ...inFields(index.fieldsWith(slot, prefixed))])];
    return highlightFields({ ...q, parts: (kind) => store.parts(id, kind) }, candidates, terms);
  });
}
