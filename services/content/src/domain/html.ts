import sanitizeHtml from 'sanitize-html';

/**
 * Descriptions (of questions, solutions, comments) are HTML written in a rich-text editor.
 * Mentions are written as `<span data-mention-user-id="12">@Jane</span>`; the id is what counts,
 * the text is only what the editor showed. Everything executable is removed: script, style,
 * iframe, object, `on*` attributes, and any URL scheme other than http, https, mailto (no
 * `javascript:` or `data:` links).
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

/**
 * Sanitizes a description. `html` is safe to render, `text` is its plain text (for search,
 * language detection and tag suggestions), `mentions` are the distinct mentioned user ids in order
 * of appearance (not yet checked against the user list: callers do that).
 */
export function sanitizeDescription(html: string): { html: string; text: string; mentions: number[] } {
  const clean = sanitizeHtml(html ?? '', options);
  const mentions: number[] = [];
  for (const m of clean.matchAll(/data-mention-user-id="(\d+)"/g)) {
    const id = Number(m[1]);
    if (Number.isSafeInteger(id) && !mentions.includes(id)) mentions.push(id);
  }
  const text = decodeEntities(clean.replace(blockTags, ' ').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
  return { html: clean, text, mentions };
}
