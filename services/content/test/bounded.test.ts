import { docxOf, zip } from '../../../test/documents.ts';
import { docxText, wordText } from '../src/domain/docx.ts';
import { cleanFileName } from '../src/domain/file-names.ts';
import { imageAllowed, MAX_MENTIONS, mentionsOf, sanitizeDescription } from '../src/domain/html.ts';
import { LimitExceeded, Unreadable } from '../src/domain/limits.ts';
import { unpackEntry, zipEntries } from '../src/domain/zip.ts';

describe('nesting depth while sanitizing', () => {
  const limits = { maxDepth: 20 };
  const nested = (n: number) => `${'<i>'.repeat(n)}x${'</i>'.repeat(n)}`;

  test('up to the limit is kept; one more element open is LimitExceeded, however long the rest', () => {
    expect(sanitizeDescription(nested(20), limits).text).toBe('x');
    expect(() => sanitizeDescription(nested(21), limits)).toThrow(LimitExceeded);
    expect(() => sanitizeDescription('<i>'.repeat(21), limits)).toThrow(/nested deeper than 20 elements/);
  });

  test('it aborts at the limit: 600,000 unclosed tags take milliseconds', () => {
    const input = '<b>'.repeat(600_000);
    const started = performance.now();
    expect(() => sanitizeDescription(input)).toThrow(/nested deeper than 256 elements/);
    expect(performance.now() - started).toBeLessThan(200);
  });

  test('what the parser closes counts as closed: siblings, void elements, implied ends, stray end tags', () => {
    const deep = '<i>'.repeat(18);
    for (const rest of [
      '<b>a</b>'.repeat(1000),
      '<br>'.repeat(1000),
      '<img src="https://x.example/a.png">'.repeat(100),
      '<p>a'.repeat(1000),
      '<ul><li>a<li>b</ul>'.repeat(300),
      '</u>'.repeat(1000),
      '<svg><g></g></svg>'.repeat(100),
    ])
      expect(() => sanitizeDescription(deep + rest, limits)).not.toThrow();
    // Unclosed paragraphs close each other; unclosed list items nest in their lists.
    expect(() => sanitizeDescription('<ul><li>'.repeat(11), limits)).toThrow(LimitExceeded);
  });
});

test('images: absolute http(s) URLs outside an /api/ path only', () => {
  for (const src of ['https://images.example.com/hops.png', 'http://example.com/a/api/b.png', 'https://api.example.com/logo.png'])
    expect([src, imageAllowed(src)]).toEqual([src, true]);
  for (const src of [
    undefined,
    '',
    '/api/v1/questions/2',
    '../api/v1/questions/2',
    'api/v1/questions/2',
    'logo.png',
    '//evil.example/x.png',
    'https://kn.example.com/api/v1/questions/2',
    'https://kn.example.com/API/v1/questions/2',
    'https://kn.example.com//api/v1/questions/2',
    'https://kn.example.com/%61pi/v1/questions/2',
    'https://kn.example.com/api',
    'https:\\\\kn.example.com\\api\\v1',
    'javascript:alert(1)',
    'data:image/png;base64,AAAA',
    'ftp://example.com/a.png',
  ])
    expect([src, imageAllowed(src)]).toEqual([src, false]);
  expect(sanitizeDescription('<p>a<img src="/api/v1/questions/2" alt="x">b</p>').html).toBe('<p>ab</p>');
});

test('mentions are distinct, in order, and at most MAX_MENTIONS', () => {
  expect(
    mentionsOf('<span data-mention-user-id="3"></span><span data-mention-user-id="1"></span><span data-mention-user-id="3"></span>'),
  ).toEqual([3, 1]);
  const many = Array.from({ length: MAX_MENTIONS + 50 }, (_, i) => `<span data-mention-user-id="${i + 1}">@u</span>`).join('');
  const mentions = mentionsOf(many);
  expect(mentions).toHaveLength(MAX_MENTIONS);
  expect(mentions.at(-1)).toBe(MAX_MENTIONS);
});

describe('zip reading', () => {
  test('the central directory is read without unpacking; too many entries is LimitExceeded', () => {
    const archive = zip({ 'a.txt': 'alpha', 'b/c.xml': '<c/>' }, { deflate: true });
    expect(zipEntries(archive, 10).map((e) => [e.name, e.method, e.size])).toEqual([
      ['a.txt', 8, 5],
      ['b/c.xml', 8, 4],
    ]);
    expect(() => zipEntries(archive, 1)).toThrow(LimitExceeded);
    // The end record's count can lie: the records themselves are counted.
    const lying = Buffer.from(archive);
    lying.writeUInt16LE(1, lying.length - 22 + 10);
    expect(() => zipEntries(lying, 1)).toThrow(/more than 1 entries/);
  });

  test('an entry declared larger than the limit is refused before it is inflated', async () => {
    const archive = zip({ 'big.xml': Buffer.alloc(1_000_000, 0x20) }, { deflate: true });
    expect(archive.length).toBeLessThan(5_000);
    const [entry] = zipEntries(archive, 10);
    await expect(unpackEntry(archive, entry!, 999_999)).rejects.toThrow(/big\.xml unpacks to 1000000 bytes; at most 999999/);
    expect((await unpackEntry(archive, entry!, 1_000_000)).length).toBe(1_000_000);
  });

  test('an entry whose header understates its size stops at the stated size: Unreadable, nothing more inflated', async () => {
    const archive = zip({ 'bomb.xml': Buffer.alloc(50_000_000, 0x20) }, { deflate: true });
    const [entry] = zipEntries(archive, 10);
    await expect(unpackEntry(archive, { ...entry!, size: 1000 }, 16_000_000)).rejects.toThrow(Unreadable);
  });

  test('what is not a zip, or is cut, is Unreadable', async () => {
    expect(() => zipEntries(Buffer.from('PK\u0003\u0004 broken docx'), 10)).toThrow(Unreadable);
    const archive = zip({ 'a.txt': 'alpha'.repeat(100) }, { deflate: true });
    const [entry] = zipEntries(archive, 10);
    await expect(unpackEntry(archive.subarray(0, 40), entry!, 1000)).rejects.toThrow(Unreadable);
    expect(new TextDecoder().decode(await unpackEntry(zip({ 's.txt': 'stored' }), zipEntries(zip({ 's.txt': 'stored' }), 1)[0]!, 10))).toBe(
      'stored',
    );
  });
});

describe('DOCX text', () => {
  test('runs, tabs, breaks and paragraphs, entities decoded, any prefix; deleted text and field codes left out', () => {
    const xml =
      '<w:body><w:p><w:r><w:t>Hops</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve"> &amp; malt </w:t></w:r><w:r><w:br/><w:t>&#x41;le&#33;</w:t></w:r></w:p>' +
      '<w:p><w:r><w:delText>gone</w:delText><w:instrText>PAGE</w:instrText><w:t/></w:r></w:p><w:p/><x:p><x:t>box</x:t></x:p></w:body>';
    expect(wordText(xml, 1000)).toBe('Hops\t & malt \nAle!\n\n\n\n\n\nbox\n\n');
    expect(wordText(xml, 3)).toBe('Hop');
  });

  test('one pass over text without end tags: megabytes of "<" take milliseconds', () => {
    const started = performance.now();
    expect(wordText(`<w:t>${'<'.repeat(4_000_000)}`, 1000)).toBe('');
    expect(wordText(`<w:t>a${'&#1'.repeat(1_000_000)}</w:t>`, 10)).toBe('a&#1&#1&#1');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('the main part is the one the package relationships name', async () => {
    const archive = zip(
      {
        '_rels/.rels':
          '<Relationships><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/word/main.xml"/></Relationships>',
        'word/main.xml': '<w:document><w:body><w:p><w:r><w:t>named part</w:t></w:r></w:p></w:body></w:document>',
      },
      { deflate: true },
    );
    const limits = { maxEntries: 10, maxUnpackedBytes: 1_000_000, maxChars: 1000 };
    expect(await docxText(archive, limits)).toBe('named part\n\n');
    expect(await docxText(docxOf('<w:p><w:r><w:t>default</w:t></w:r></w:p>'), limits)).toBe('default\n\n');
    await expect(docxText(zip({ 'other.xml': '<x/>' }), limits)).rejects.toThrow(Unreadable);
  });
});

test('file names lose bidirectional controls, and are never empty', () => {
  expect(cleanFileName('invoice\u202Egnp.exe')).toBe('invoicegnp.exe');
  expect(cleanFileName('\u2066a\u2069\u200E\u200Fb\u061C\u202A\u202B\u202C\u202D.txt')).toBe('ab.txt');
  expect(cleanFileName('\u202E')).toBe('file');
  expect(cleanFileName('Übersicht (März) – 日本語.txt')).toBe('Übersicht (März) – 日本語.txt');
});
