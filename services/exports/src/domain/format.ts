/** Text rules of the export files: XML escaping, TSV escaping, dates and file names. */

/**
 * Characters XML 1.0 does not allow anywhere (C0 controls other than TAB, LF and CR; U+FFFE,
 * U+FFFF; lone surrogates): they are dropped, since no escape makes them legal.
 */
const XML_ILLEGAL = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
export const stripXmlIllegal = (text: string) => text.replace(XML_ILLEGAL, '');

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };
const ATTRIBUTE_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, '"': '&quot;', '\t': '&#9;', '\n': '&#10;' };

/** Element content: markup characters escaped, and CR too (a parser would turn it into LF). */
export const xmlText = (text: string) => stripXmlIllegal(text).replace(/[&<>\r]/g, (c) => TEXT_ESCAPES[c]!);
/** Attribute values (in double quotes): also quotes, TAB and LF, which attribute normalisation would turn into spaces. */
export const xmlAttribute = (text: string) => stripXmlIllegal(text).replace(/[&<>"\r\n\t]/g, (c) => ATTRIBUTE_ESCAPES[c]!);

const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
/**
 * A field of the topic-content file: backslash, TAB, LF and CR become `\\`, `\t`, `\n`, `\r`
 * (so every row is one line and the escaping can be undone); lone surrogates, which UTF-16
 * cannot carry, become U+FFFD.
 */
export const tsvField = (text: string) => text.toWellFormed().replace(/[\\\t\n\r]/g, (c) => TSV_ESCAPES[c]!);

const pad = (n: number) => String(n).padStart(2, '0');
/** `yyyy-MM-dd HH:mm:ss` in UTC (the topic-content file's date column). */
export function tsvDate(date: Date) {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}
/** `yyyyMMdd-HHmmss` in UTC (export file names). */
export function fileStamp(date: Date) {
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

/**
 * The network name as it appears in file names: letters (any script), digits, `.`, `_` and `-`
 * kept, every other run of characters one `_`; `network` when nothing is left.
 */
export function fileNetworkName(name: string) {
  const clean = name
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._-]+/gu, '_')
    .replace(/^[_.]+|_+$/g, '')
    .slice(0, 100);
  return clean || 'network';
}

export function exportFilename(kind: 'topic_content' | 'content', network: string, start: Date) {
  const base = `${fileNetworkName(network)}_${kind}_export_${fileStamp(start)}`;
  return kind === 'content' ? `${base}.xml.zip` : `${base}.csv`;
}
