import sanitizeHtml from 'sanitize-html';
import { LimitExceeded } from './limits.ts';

/**
 * Images are shown to every reader, whose browser fetches them with the reader's cookies: an image
 * must be an absolute http(s) URL, and not one of an API (a path under /api/, on any host, since
 * this service does not know the addresses the network is reached at). A relative source would be
 * resolved against the page showing it (the web app's origin, where `../api/v1/questions/2`
 * counts a view of question 2 by each reader), so it is dropped too; the web app inserts none.
 */
export function imageAllowed(src: string | undefined): boolean {
  if (!src || !URL.canParse(src)) return false;
  const url = new URL(src);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape stays as written; the check below reads it as it is.
  }
  return !/^\/+api(\/|$)/i.test(path);
}

/**
 * Descriptions (of questions, solutions, comments) are HTML written in a rich-text editor.
 * Mentions are written as `<span data-mention-user-id="12">@Jane</span>`; the id is what counts,
 * the text is only what the editor showed. Everything executable is removed: script, style,
 * iframe, object, `on*` attributes, and any URL scheme other than http, https, mailto (no
 * `javascript:` or `data:` links); images that fail `imageAllowed` are removed whole.
 */
const options: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'hr',
    'div',
    'span',
    'blockquote',
    'pre',
    'code',
    'b',
    'strong',
    'i',
    'em',
    'u',
    's',
    'strike',
    'del',
    'ins',
    'sub',
    'sup',
    'mark',
    'small',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'ul',
    'ol',
    'li',
    'dl',
    'dt',
    'dd',
    'a',
    'img',
    'table',
    'thead',
    'tbody',
    'tfoot',
    'tr',
    'th',
    'td',
    'caption',
    'colgroup',
    'col',
    'figure',
    'figcaption',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'target', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    span: ['data-mention-user-id', 'class'],
    code: ['class'],
    pre: ['class'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan'],
    ol: ['start'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  // script/style/textarea content is dropped with the tag (sanitize-html's default nonTextTags).
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed'],
  transformTags: {
    span: (tagName, attribs) => {
      const id = attribs['data-mention-user-id'];
      const attrs: Record<string, string> = {};
      if (id !== undefined && /^\d{1,15}$/.test(id.trim())) attrs['data-mention-user-id'] = id.trim();
      if (attribs.class) attrs.class = attribs.class;
      return { tagName, attribs: attrs };
    },
    a: (tagName, attribs) => {
      const attrs = { ...attribs };
      if (attrs.target === '_blank') attrs.rel = 'noopener noreferrer';
      return { tagName, attribs: attrs };
    },
  },
  exclusiveFilter: (frame) => frame.tag === 'img' && !imageAllowed(frame.attribs.src),
};

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return entities[name.toLowerCase()] ?? whole;
  });
}

const blockTags = /<\/?(p|br|hr|div|blockquote|pre|h[1-6]|ul|ol|li|dl|dt|dd|table|tr|td|th|caption|figure|figcaption)\b[^>]*>/gi;

/** Mentions a description counts at most (the first distinct ones): each may notify a person. */
export const MAX_MENTIONS = 1000;

/** The distinct user ids a sanitized description mentions, in order of appearance, at most MAX_MENTIONS. */
export function mentionsOf(clean: string): number[] {
  const mentions = new Set<number>();
  for (const m of clean.matchAll(/data-mention-user-id="(\d+)"/g)) {
    const id = Number(m[1]);
    if (Number.isSafeInteger(id)) mentions.add(id);
    if (mentions.size === MAX_MENTIONS) break;
  }
  return [...mentions];
}

/**
 * Elements open at once, at most, by default (HTML_MAX_DEPTH of the content service). The parser
 * under sanitize-html keeps its open elements in an array it inserts at the front of, so each
 * element costs as much as the depth: unclosed tags by the hundred thousand took minutes.
 */
export const DEFAULT_MAX_DEPTH = 256;

export interface Sanitized {
  html: string;
  text: string;
  mentions: number[];
}

/**
 * Sanitizes a description. `html` is safe to render, `text` is its plain text (for search,
 * language detection and tag suggestions), `mentions` are the distinct mentioned user ids in order
 * of appearance (not yet checked against the user list: callers do that). HTML nested deeper than
 * `maxDepth` elements throws LimitExceeded as soon as the parser reaches that depth.
 */
export function sanitizeDescription(html: string, { maxDepth = DEFAULT_MAX_DEPTH } = {}): Sanitized {
  let depth = 0;
  const clean = sanitizeHtml(html ?? '', {
    ...options,
    // Called for every element the parser opens and closes (implied ones and void ones too), so
    // `depth` is the parser's own.
    onOpenTag: () => {
      if (++depth > maxDepth) throw new LimitExceeded('too_complex', `the HTML is nested deeper than ${maxDepth} elements`);
    },
    onCloseTag: () => {
      depth--;
    },
  });
  const mentions = mentionsOf(clean);
  const text = decodeEntities(clean.replace(blockTags, ' ').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
  return { html: clean, text, mentions };
}
