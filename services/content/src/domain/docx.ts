import { Unreadable } from './limits.ts';
import { unpackEntry, zipEntries } from './zip.ts';

/*
 * The text of a Word document (DOCX), for search: the runs' text (`<w:t>`) of the main document
 * part, with tabs, line breaks and paragraph ends as whitespace. It reads two entries of the zip
 * (the package's relationships, which name the main part, and that part) within the limits of
 * zip.ts, and scans the XML once, front to back, without building a tree of it.
 */

export interface DocxLimits {
  /** Entries of the zip at most. */
  maxEntries: number;
  /** The largest part unpacked (bytes). */
  maxUnpackedBytes: number;
  /** Characters of text wanted: the scan stops there. */
  maxChars: number;
}

const OFFICE_DOCUMENT = /Type="[^"]*\/officeDocument"/;
/** `_rels/.rels` names a few parts in well under a kilobyte; more is read as no relationships. */
const MAX_RELS_BYTES = 16 * 1024;

/** The main document part named by `_rels/.rels` (`word/document.xml` when it says nothing usable). */
function mainPart(rels: string): string {
  for (const [relationship] of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    if (!OFFICE_DOCUMENT.test(relationship)) continue;
    const target = /Target="([^"]+)"/.exec(relationship)?.[1];
    if (target) return target.replace(/^\//, '');
  }
  return 'word/document.xml';
}

export async function docxText(bytes: Uint8Array, limits: DocxLimits): Promise<string> {
  const entries = zipEntries(bytes, limits.maxEntries);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const decoder = new TextDecoder();
  const rels = byName.get('_rels/.rels');
  const name =
    rels && rels.size <= MAX_RELS_BYTES ? mainPart(decoder.decode(await unpackEntry(bytes, rels, MAX_RELS_BYTES))) : 'word/document.xml';
  const main = byName.get(name);
  if (!main) throw new Unreadable(`no main document part (${name})`);
  return wordText(decoder.decode(await unpackEntry(bytes, main, limits.maxUnpackedBytes)), limits.maxChars);
}

const xmlEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,4});/gi, (whole, name: string) => {
    if (name[0] !== '#') return xmlEntities[name] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/**
 * The text of WordprocessingML: what stands inside `t` elements (`w:t`, and the `a:t` of text
 * boxes, whatever the prefix), a tab for `tab`, a line break for `br` and `cr`, a blank line after
 * each paragraph. One pass: every character is looked at once or twice; it stops at `maxChars`.
 */
export function wordText(xml: string, maxChars: number): string {
  const out: string[] = [];
  let length = 0;
  const add = (piece: string) => {
    out.push(piece);
    length += piece.length;
  };
  let inText = false;
  for (let at = 0; at < xml.length && length < maxChars; ) {
    const open = xml.indexOf('<', at);
    if (open < 0) break;
    if (inText && open > at) add(decodeXml(xml.slice(at, open)));
    // From the tag's end on, never from its start again: `<<<<…` is one pass too.
    const close = xml.indexOf('>', open + 1);
    if (close < 0) break;
    const closing = xml.charCodeAt(open + 1) === 0x2f; // '/'
    const name = /^[^\s/>]*/.exec(xml.slice(open + (closing ? 2 : 1), Math.min(close, open + 66)))![0];
    const local = name.slice(name.indexOf(':') + 1);
    const empty = xml.charCodeAt(close - 1) === 0x2f;
    if (local === 't') inText = !closing && !empty;
    else if (!closing && local === 'tab') add('\t');
    else if (!closing && (local === 'br' || local === 'cr')) add('\n');
    else if ((closing || empty) && local === 'p') add('\n\n');
    at = close + 1;
  }
  return out.join('').slice(0, maxChars);
}
