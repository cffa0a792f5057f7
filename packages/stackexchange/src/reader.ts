import { createReadStream, existsSync } from 'node:fs';
import { SaxesParser } from 'saxes';

/** A problem with the dump as a whole: missing file, not XML, another format. The import stops. */
export class DumpError extends Error {}

export interface RawRow {
  /** 1-based position of the row in its file, for messages about malformed rows. */
  index: number;
  line: number;
  attributes: Record<string, string>;
}

/**
 * Streams the `<row …/>` elements of one Stack Exchange dump file. The file is read in chunks and
 * rows are handed out as they are parsed, so memory stays flat whatever the file's size.
 */
export async function* readRows(file: string, root: string): AsyncGenerator<RawRow> {
  if (!existsSync(file))
    throw new DumpError(
      `${file} is missing: a Stack Exchange dump folder has Posts.xml, Users.xml, Comments.xml, Tags.xml, PostLinks.xml and Votes.xml`,
    );
  const parser = new SaxesParser({ xmlns: false, position: true });
  let pending: RawRow[] = [];
  let index = 0;
  let rootSeen = false;
  let failure: Error | undefined;
  parser.on('opentag', (tag) => {
    if (!rootSeen) {
      rootSeen = true;
      if (tag.name !== root)
        failure = new DumpError(`${file} is not a Stack Exchange dump file: its root element is <${tag.name}>, expected <${root}>`);
      return;
    }
    if (tag.name !== 'row') return;
    index++;
    pending.push({ index, line: parser.line, attributes: tag.attributes as Record<string, string> });
  });
  parser.on('error', (err) => {
    failure ??= new DumpError(`${file} is not well-formed XML: ${err.message}`);
  });
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  let first = true;
  for await (let chunk of stream as AsyncIterable<string>) {
    if (first) {
      chunk = chunk.replace(/^\uFEFF/, '');
      first = false;
    }
    parser.write(chunk);
    if (failure) break;
    const rows = pending;
    pending = [];
    yield* rows;
  }
  if (!failure) parser.close();
  if (failure) {
    stream.destroy();
    throw failure;
  }
  if (!rootSeen) throw new DumpError(`${file} is empty`);
  yield* pending;
}
