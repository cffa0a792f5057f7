import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';
import { LimitExceeded, Unreadable } from './limits.ts';

/*
 * A zip archive read for a few of its entries (the parts of a DOCX), with the work bounded before
 * it starts: the central directory is read first, its entry count and an entry's declared size are
 * checked against the limits, and an entry is inflated no further than its declared size. A zip
 * bomb is refused by its headers; one whose headers lie stops at the size they state.
 */

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated; others are not read. */
  method: number;
  compressedSize: number;
  /** As the central directory declares it. */
  size: number;
  /** Where the entry's local header starts. */
  offset: number;
  encrypted: boolean;
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;

/** The end-of-central-directory record: in the last 22 bytes, or before a comment of at most 65,535. */
function endOfDirectory(view: DataView): number {
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--)
    if (view.getUint32(at, true) === END_OF_DIRECTORY) return at;
  throw new Unreadable('not a zip archive (no end of central directory)');
}

/** The entries of the central directory, without reading any entry; more than `maxEntries` is LimitExceeded. */
export function zipEntries(bytes: Uint8Array, maxEntries: number): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = endOfDirectory(view);
  const declared = view.getUint16(end + 10, true);
  const size = view.getUint32(end + 12, true);
  const start = view.getUint32(end + 16, true);
  if (declared === 0xffff || start === 0xffffffff) throw new Unreadable('a zip64 archive (no document needs one)');
  if (declared > maxEntries) throw new LimitExceeded('too_large', `the archive has ${declared} entries; at most ${maxEntries} are read`);
  if (start + size > end) throw new Unreadable('the central directory lies outside the archive');
  const decoder = new TextDecoder();
  const entries: ZipEntry[] = [];
  for (let at = start; at < start + size; ) {
    if (at + 46 > end || view.getUint32(at, true) !== DIRECTORY_ENTRY) throw new Unreadable('a damaged central directory');
    // The count in the end record can lie: the records themselves are counted too.
    if (entries.length === maxEntries) throw new LimitExceeded('too_large', `the archive has more than ${maxEntries} entries`);
    const nameLength = view.getUint16(at + 28, true);
    const next = at + 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (next > end) throw new Unreadable('a damaged central directory');
    entries.push({
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      offset: view.getUint32(at + 42, true),
      encrypted: (view.getUint16(at + 8, true) & 1) === 1,
    });
    at = next;
  }
  return entries;
}

const inflate = promisify(inflateRaw);

/**
 * The bytes of one entry. An entry declared larger than `maxBytes` is LimitExceeded before anything
 * is inflated; inflating stops at the declared size (a lying header makes the entry Unreadable).
 * zlib inflates on the thread pool, not on the caller's event loop.
 */
export async function unpackEntry(bytes: Uint8Array, entry: ZipEntry, maxBytes: number): Promise<Uint8Array> {
  if (entry.size > maxBytes)
    throw new LimitExceeded('too_large', `${entry.name} unpacks to ${entry.size} bytes; at most ${maxBytes} are read`);
  if (entry.encrypted) throw new Unreadable(`${entry.name} is encrypted`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const local = entry.offset;
  if (local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL_HEADER) throw new Unreadable(`${entry.name}: no local header`);
  const from = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
  const data = bytes.subarray(from, from + entry.compressedSize);
  if (data.length !== entry.compressedSize) throw new Unreadable(`${entry.name} is cut short`);
  if (entry.method === 0) {
    if (entry.size !== entry.compressedSize) throw new Unreadable(`${entry.name}: stored with two sizes`);
    return data;
  }
  if (entry.method !== 8) throw new Unreadable(`${entry.name}: compression method ${entry.method}`);
  let out: Uint8Array;
  try {
    out = await inflate(data, { maxOutputLength: Math.max(1, entry.size) });
  } catch (err) {
    throw new Unreadable(`${entry.name} does not inflate to its declared ${entry.size} bytes: ${(err as Error).message}`);
  }
  if (out.length !== entry.size) throw new Unreadable(`${entry.name} inflates to ${out.length} bytes, not the declared ${entry.size}`);
  return out;
}
