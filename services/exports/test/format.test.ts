import { Readable } from 'node:stream';
import { questionXml } from '../src/domain/content-xml.ts';
import { exportFilename, fileNetworkName, stripXmlIllegal, tsvDate, tsvField, xmlAttribute, xmlText } from '../src/domain/format.ts';
import { matchedTopics, topicContentFile } from '../src/domain/topic-content.ts';

describe('XML text', () => {
  test('escapes markup and drops characters XML 1.0 cannot carry', () => {
    expect(xmlText('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(xmlText('bell\u0007 nul\u0000 tab\t lf\n cr\r')).toBe('bell nul tab\t lf\n cr&#13;');
    expect(stripXmlIllegal('\uFFFE\uFFFF ok')).toBe(' ok');
    // A lone surrogate is dropped; a pair (an emoji) stays.
    expect(stripXmlIllegal('a\uD83Db\uDE00c😀')).toBe('abc😀');
  });

  test('attribute values keep quotes, TAB and LF through attribute normalisation', () => {
    expect(xmlAttribute('say "hi"\tand\nbye & <go>')).toBe('say &quot;hi&quot;&#9;and&#10;bye &amp; &lt;go&gt;');
  });

  test('a question, anonymised: the poser is hidden wherever they appear in it', () => {
    const xml = questionXml(
      {
        id: 7,
        author_id: 1,
        language: 'en',
        title: 'T <1>',
        description: null,
        description_length: 0,
        published: '2026-01-01T00:00:00.000Z',
        created: '2026-01-01T00:00:00.000Z',
        updated: '2026-01-01T00:00:00.000Z',
        is_deleted: false,
        view_count: 1,
        upvote_count: 0,
        category: { id: 2, name: 'Cat "A"' },
        tags: [{ id: 'u-1', label: 'x&y' }],
        solutions: [
          {
            id: 9,
            author_id: 1,
            language: 'en',
            description: 'mine',
            description_length: 4,
            is_deleted: false,
            published: null,
            created: '2026-01-01T00:00:00.000Z',
            updated: '2026-01-01T00:00:00.000Z',
            rating: 4.5,
            rating_count: 2,
            upvote_count: 0,
            accepted_by_question_poser: null,
            validity_period: null,
            expires: null,
          },
        ],
        comments: [
          {
            id: 3,
            solution_id: 9,
            author_id: 5,
            description: 'c',
            description_length: 1,
            upvote_count: 0,
            is_deleted: false,
            created: '2026-01-01T00:00:00.000Z',
            updated: '2026-01-01T00:00:00.000Z',
          },
        ],
      },
      new Map([
        [1, { id: 1, firstname: 'Pos', lastname: 'Er', is_deleted: false }],
        [5, { id: 5, firstname: 'Com', lastname: 'Menter', is_deleted: true }],
      ]),
      true,
    );
    expect(xml).not.toContain('Pos');
    expect(xml).toContain('<title>T &lt;1&gt;</title>');
    expect(xml).not.toContain('<description></description><author');
    expect(xml).toContain('<category id="2" name="Cat &quot;A&quot;"/>');
    expect(xml).toContain('<tag id="u-1">x&amp;y</tag>');
    expect(xml).toContain('rating="4.5"');
    expect(xml).toContain('<author id="5" firstname="Com" lastname="Menter" is_deleted="true"/>');
    expect(xml.match(/<author anonymised="true"\/>/g)).toHaveLength(2);
  });
});

describe('topic-content text', () => {
  test('TAB, newlines and backslash are escaped so that a row stays one line', () => {
    expect(tsvField('a\tb\nc\r\nd\\e')).toBe('a\\tb\\nc\\r\\nd\\\\e');
    expect(tsvField('lone \uD800 surrogate')).toBe('lone \uFFFD surrogate');
  });

  test('dates are yyyy-MM-dd HH:mm:ss in UTC', () => {
    expect(tsvDate(new Date('2026-03-04T05:06:07.890Z'))).toBe('2026-03-04 05:06:07');
  });

  test('topics match by tag id or by label, case ignored', () => {
    const q = { tags: [{ id: 'uuid-1', label: 'Beer' }] };
    expect(
      matchedTopics(q, [
        { global_concept_id: 'uuid-1', label: 'whatever' },
        { global_concept_id: 'other', label: 'beer' },
        { global_concept_id: 'none', label: 'wine' },
      ]).map((t) => t.global_concept_id),
    ).toEqual(['uuid-1', 'other']);
  });

  test('the file is UTF-16LE with a BOM, a header and CRLF rows', async () => {
    const pages = Readable.from([
      {
        questions: [
          {
            id: 1,
            title: 'Ünïcode title',
            description: 'd',
            published: '2026-01-02T03:04:05.000Z',
            view_count: 3,
            tags: [{ id: 't', label: 'Topic' }],
            solutions: [{ author_id: 4, description: 's' }],
          },
        ],
        users: new Map([[4, { id: 4, firstname: 'Ann', lastname: 'Lee', is_deleted: false }]]),
      },
    ]);
    const stats = { count: 0 };
    const chunks: Buffer[] = [];
    for await (const chunk of topicContentFile(pages as never, [{ global_concept_id: 't', label: 'Topic' }], stats)) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    const lines = bytes.subarray(2).toString('utf16le').split('\r\n');
    expect(lines[1]).toBe('1\t2026-01-02 03:04:05\tÜnïcode title\td\t3\tt\tTopic\t1\tAnn Lee\ts');
    expect(lines[2]).toBe('');
    expect(stats.count).toBe(1);
  });
});

describe('file names', () => {
  test('<network>_<kind>_export_yyyyMMdd-HHmmss with the network name made file-safe', () => {
    const at = new Date('2026-11-22T08:09:10.123Z');
    expect(exportFilename('content', 'Knowledge Network', at)).toBe('Knowledge_Network_content_export_20261122-080910.xml.zip');
    expect(exportFilename('topic_content', 'Bier & Wein: Zürich/Genf', at)).toBe(
      'Bier_Wein_Zürich_Genf_topic_content_export_20261122-080910.csv',
    );
    expect(fileNetworkName('../..')).toBe('network');
  });
});
