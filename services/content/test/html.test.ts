import { detectLanguage } from '@kn/similarity';
import { sanitizeDescription } from '../src/domain/html.ts';
import { slugify } from '../src/domain/slug.ts';

describe('sanitizeDescription', () => {
  test('removes scripts, styles, frames, event handlers and javascript: URLs', () => {
    const { html } = sanitizeDescription(
      '<p onclick="x()" style="color:red">a<script>alert(1)</script><style>p{}</style><iframe src="https://evil"></iframe>' +
        '<a href="javascript:alert(1)">j</a><a href="JaVaScRiPt:alert(1)">k</a><img src="x" onerror="alert(1)"><a href="https://ok.example/">ok</a></p>',
    );
    expect(html).not.toMatch(/script|style|iframe|onclick|onerror|javascript/i);
    expect(html).toContain('<a href="https://ok.example/">ok</a>');
  });

  test('keeps formatting and mentions; mentions are distinct numeric ids in order', () => {
    const r = sanitizeDescription(
      '<h2>T</h2><ul><li><b>x</b></li></ul><pre><code>a &lt; b</code></pre>' +
        '<span data-mention-user-id="7">@Ann</span> <span data-mention-user-id="3">@Bo</span> <span data-mention-user-id="7">@Ann</span>' +
        '<span data-mention-user-id="evil">@X</span>',
    );
    expect(r.mentions).toEqual([7, 3]);
    expect(r.html).toContain('<pre><code>a &lt; b</code></pre>');
    expect(r.html).toContain('<span>@X</span>');
    expect(r.text).toBe('T x a < b @Ann @Bo @Ann@X');
  });

  test('plain text and empty input', () => {
    expect(sanitizeDescription('')).toEqual({ html: '', text: '', mentions: [] });
    expect(sanitizeDescription('just text & more').text).toBe('just text & more');
  });
});

describe('detectLanguage', () => {
  test.each([
    ['en', 'How do I configure the proxy for this machine?'],
    ['de', 'Wie kann ich den Proxy für das Netzwerk einrichten?'],
    ['fr', 'Comment configurer le proxy pour le réseau de la maison?'],
    ['es', '¿Cómo puedo configurar el proxy para la red?'],
    ['it', 'Come posso configurare il proxy per la rete della casa?'],
    ['pt', 'Como posso configurar o proxy para a rede? Não funciona.'],
  ])('%s', (lang, text) => expect(detectLanguage(text, 'xx')).toBe(lang));

  test('falls back when nothing is recognisable', () => {
    expect(detectLanguage('kubectl rollout', 'de')).toBe('de');
    expect(detectLanguage('', 'fr')).toBe('fr');
  });
});

test('slugify', () => {
  expect(slugify('Wie groß ist die Änderung?')).toBe('wie-gross-ist-die-anderung');
  expect(slugify('')).toBe('question');
  expect(slugify('x'.repeat(200)).length).toBe(80);
});
