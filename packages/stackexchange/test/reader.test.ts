import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { dataset } from '@kn/testing';
import { DumpError, type DumpFile, dumpFiles, parseRow, readRows } from '../src/index.ts';

const beer = dataset('stackexchange-beer');

async function count(kind: DumpFile, dir = beer) {
  const { file, root } = dumpFiles[kind];
  const counts = { rows: 0, malformed: 0, questions: 0, answers: 0, duplicates: 0 };
  for await (const raw of readRows(path.join(dir, file), root)) {
    counts.rows++;
    const parsed = parseRow(kind, raw);
    if (!parsed.ok) {
      counts.malformed++;
      continue;
    }
    const row = parsed.row as Record<string, unknown>;
    if (kind === 'posts') {
      if (row.PostTypeId === 1) counts.questions++;
      if (row.PostTypeId === 2) counts.answers++;
    }
    if (kind === 'postLinks' && row.LinkTypeId === 3) counts.duplicates++;
  }
  return counts;
}

describe('the beer dump, streamed', () => {
  test('has the figures of its README', async () => {
    expect(await count('posts')).toMatchObject({ questions: 1029, answers: 2277, malformed: 0 });
    expect(await count('comments')).toMatchObject({ rows: 3509, malformed: 0 });
    expect(await count('users')).toMatchObject({ rows: 6863, malformed: 0 });
    expect(await count('tags')).toMatchObject({ rows: 153, malformed: 0 });
    expect(await count('postLinks')).toMatchObject({ rows: 148, duplicates: 26, malformed: 0 });
  });

  test('parses dates as UTC and tags from both notations', async () => {
    const rows = readRows(path.join(beer, 'Posts.xml'), 'posts');
    const first = (await rows.next()).value!;
    await rows.return(undefined); // closes the file
    const row = parseRow('posts', first);
    expect(row.ok && row.row).toMatchObject({ Id: 1, CreationDate: '2014-01-21T20:26:05.383Z', Tags: ['hops'] });
    const pipes = parseRow('posts', {
      index: 1,
      line: 1,
      attributes: { Id: '1', PostTypeId: '1', CreationDate: '2020-01-01T00:00:00', Tags: '|a|b-c|' },
    });
    expect(pipes.ok && pipes.row.Tags).toEqual(['a', 'b-c']);
  });
});

describe('bad dumps', () => {
  const made: string[] = [];
  const dir = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'kn-dump-'));
    made.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  test('a missing file says which', async () => {
    await expect(count('posts', dir())).rejects.toThrow(/Posts\.xml is missing/);
  });

  test('another format is refused by its root element', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'Posts.xml'), '<?xml version="1.0"?><rss><channel/></rss>');
    await expect(count('posts', d)).rejects.toThrow(DumpError);
    await expect(count('posts', d)).rejects.toThrow(/root element is <rss>, expected <posts>/);
  });

  test('broken XML is an error naming the file', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'Posts.xml'), '<posts><row Id="1" PostTypeId="1" <row></posts>');
    await expect(count('posts', d)).rejects.toThrow(/Posts\.xml is not well-formed XML/);
  });

  test('a file compressed with brotli or gzip is read as the XML, which wins when both are there', async () => {
    const xml = (text: string) =>
      `\uFEFF<?xml version="1.0" encoding="utf-8"?>\n<tags>\n<row Id="1" TagName="${text}" />\n<row Id="2" TagName="zw\u00f6lf-\u00e9t\u00e9" />\n</tags>`;
    const texts = async (d: string) => {
      const rows = [];
      for await (const raw of readRows(path.join(d, 'Tags.xml'), 'tags')) rows.push([raw.index, raw.line, raw.attributes.TagName]);
      return rows;
    };
    const expected = [
      [1, 3, 'hops'],
      [2, 4, 'zwölf-été'],
    ];
    const br = dir();
    writeFileSync(path.join(br, 'Tags.xml.br'), brotliCompressSync(xml('hops')));
    expect(await texts(br)).toEqual(expected);
    const gz = dir();
    writeFileSync(path.join(gz, 'Tags.xml.gz'), gzipSync(xml('hops')));
    expect(await texts(gz)).toEqual(expected);
    writeFileSync(path.join(br, 'Tags.xml'), xml('plain'));
    expect((await texts(br))[0]).toEqual([1, 3, 'plain']);
  });

  test('a compressed file that does not decompress is an error naming it', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'Posts.xml.br'), brotliCompressSync('<posts><row Id="1" /></posts>'.repeat(100)).subarray(0, 20));
    await expect(count('posts', d)).rejects.toThrow(DumpError);
    await expect(count('posts', d)).rejects.toThrow(/Posts\.xml\.br does not decompress/);
    writeFileSync(path.join(d, 'Posts.xml.gz'), 'not gzip at all');
    rmSync(path.join(d, 'Posts.xml.br'));
    await expect(count('posts', d)).rejects.toThrow(/Posts\.xml\.gz does not decompress/);
  });

  test('a malformed row is counted with its row number and skipped', async () => {
    const d = dir();
    writeFileSync(
      path.join(d, 'Comments.xml'),
      '\uFEFF<?xml version="1.0" encoding="utf-8"?>\n<comments>\n<row Id="1" PostId="5" Text="ok" CreationDate="2014-01-21T20:34:28.740" />\n<row Id="x" PostId="5" Text="bad id" CreationDate="2014-01-21T20:34:28.740" />\n<row Id="3" PostId="5" Text="no date" />\n</comments>',
    );
    const rows = [];
    for await (const raw of readRows(path.join(d, 'Comments.xml'), 'comments')) rows.push(parseRow('comments', raw));
    expect(rows.map((r) => r.ok)).toEqual([true, false, false]);
    const bad = rows[1];
    expect(!bad.ok && bad.malformed).toMatchObject({ file: 'Comments.xml', index: 2, line: 4, reason: expect.stringContaining('Id') });
  });
});
