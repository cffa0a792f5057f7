import { createReadStream, existsSync } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { SaxesParser } from 'saxes';

/** A problem with the dump as a whole: missing file, not XML, another format. The import stops. */
export class DumpError extends Error {}

/**
 * The forms a dump file is read in: as published, or compressed beside or instead of it
 * (`Posts.xml.br`, `Posts.xml.gz`), so that a dump can be kept in a repository at a fifth of its
 * size (brotli) and still be streamed.
 */
const FORMS = [
  { suffix: '', decompress: undefined },
  { suffix: '.br', decompress: createBrotliDecompress },
  { suffix: '.gz', decompress: createGunzip },
] as const;

/** The file `X.xml` is read from: itself, else `X.xml.br`, else `X.xml.gz`; undefined when none is there. */
export function dumpFileOnDisk(file: string): string | undefined {
  return FORMS.map((f) => file + f.suffix).find((candidate) => existsSync(candidate));
}

export const missingFile = (file: string) =>
  new DumpError(
    `${file} is missing: a Stack Exchange dump folder has Posts.xml, Users.xml, Comments.xml, Tags.xml, PostLinks.xml and Votes.xml (each may be compressed as .xml.br or .xml.gz)`,
  );

/** The text of a dump file, decompressed as it is read when it is `.br` or `.gz`. */
function openText(file: string): Readable {
  const source = createReadStream(file, { highWaterMark: 256 * 1024 });
  const form = FORMS.find((f) => f.suffix && file.endsWith(f.suffix));
  if (!form?.decompress) return source.setEncoding('utf8');
  const text = form.decompress();
  // pipeline hands a read error of the file on to the decompressor, whose reader sees it.
  pipeline(source, text, () => {});
  return text.setEncoding('utf8');
}

export interface RawRow {
  /** 1-based position of the row in its file, for messages about malformed rows. */
  index: number;
  line: number;
  attributes: Record<string, string>;
}

/**
 * Streams the `<row …/>` elements of one Stack Exchange dump file (`X.xml`, or `X.xml.br` /
 * `X.xml.gz` in its place). The file is read in chunks and rows are handed out as they are
 * parsed, so memory stays flat whatever the file's size.
 */
export async function* readRows(file: string, root: string): AsyncGenerator<RawRow> {
  const onDisk = dumpFileOnDisk(file);
  if (!onDisk) throw missingFile(file);
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
  const stream = openText(onDisk);
  let first = true;
  try {
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
  } catch (err) {
    // A compressed file that does not decompress (truncated, another format) is a broken dump; a
    // failed read of the disk (an error with a syscall) is not the dump's fault.
    const { syscall, message } = err as { syscall?: string; message?: string };
    if (onDisk !== file && !syscall) throw new DumpError(`${onDisk} does not decompress: ${message}`);
    throw err;
  }
  if (!failure) parser.close();
  if (failure) {
    stream.destroy();
    throw failure;
  }
  if (!rootSeen) throw new DumpError(`${file} is empty`);
  yield* pending;
}
