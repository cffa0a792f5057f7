import { validationError } from '@kn/contracts';

/*
 * Results sized for a language model: descriptions are sanitized HTML, which a model reads worse
 * and pays more for than the text; every text is cut at a bound so that one big question cannot
 * fill a model's context; lists page by an opaque cursor as MCP's own lists do.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Readable text of sanitized HTML: blocks and line breaks become new lines, list items dashes, tags go, entities are decoded. */
export function plainText(html: string | null | undefined): string {
  if (!html) return '';
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<\/(p|div|h[1-6]|ul|ol|pre|blockquote|tr|table)\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** At most `max` characters (code points): a longer text ends in “…”. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** The cursor of the page that starts at `offset`: opaque to clients, so that its form may change. */
export const cursorOf = (offset: number) => Buffer.from(JSON.stringify({ o: offset })).toString('base64url');

/** The offset a cursor stands for (0 without one); a cursor this server did not make is a validation error. */
export function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const { o } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o: unknown };
    if (Number.isSafeInteger(o) && (o as number) >= 0 && (o as number) <= 1_000_000) return o as number;
  } catch {}
  throw validationError('cursor: not a cursor of this server (pass next_cursor of an earlier result)', [
    { path: 'cursor', code: 'invalid_format', message: 'not a cursor of this server' },
  ]);
}

/** The cursor of the next page, when there is one. */
export const nextCursor = (offset: number, shown: number, total: number) => (offset + shown < total ? cursorOf(offset + shown) : undefined);
