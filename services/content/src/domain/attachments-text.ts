import { docxText } from './docx.ts';
import { sanitizeDescription } from './html.ts';

/** Events must stay well below the NATS message limit (1 MiB by default). */
export const MAX_EXTRACTED_CHARS = 100_000;
/** Text read before whitespace is collapsed: room for the runs of spaces and line ends that go. */
const RAW_CHARS = MAX_EXTRACTED_CHARS * 2;
/**
 * Bytes of an HTML file read: the text wanted is in its first few megabytes (markup and all), and
 * sanitizing a whole upload of 25 MiB took more than a worker's 256 MiB.
 */
export const HTML_BYTES = 4 * 1024 * 1024;
/** Entries of a DOCX read at most: a document has tens (its parts, its images); this is far above any real one. */
export const MAX_ZIP_ENTRIES = 10_000;

export interface ExtractLimits {
  /** Elements open at once in an HTML file (HTML_MAX_DEPTH). */
  maxDepth: number;
  /** The largest part of a DOCX unpacked (DOCUMENT_MAX_UNPACKED_BYTES). */
  maxUnpackedBytes: number;
}

const isPdf = (mime: string, name: string) => mime === 'application/pdf' || /\.pdf$/i.test(name);
const isDocx = (mime: string, name: string) =>
  mime === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' || /\.docx$/i.test(name);
const isHtml = (mime: string, name: string) => mime === 'text/html' || mime === 'application/xhtml+xml' || /\.x?html?$/i.test(name);
const isText = (mime: string, name: string) => mime.startsWith('text/') || /\.(txt|md|csv|log)$/i.test(name);

/** The text of a PDF's pages in order (unpdf, pure JS), page by page until there is enough. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const { getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    let text = '';
    for (let n = 1; n <= pdf.numPages && text.length < RAW_CHARS; n++) {
      const page = await pdf.getPage(n);
      for (const item of (await page.getTextContent()).items) if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
      text += '\n';
      page.cleanup();
    }
    return text;
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/**
 * Searchable text of an attachment: plain text, HTML (tags dropped), PDF (unpdf) and DOCX
 * (docx.ts). Anything else gives ''. Control characters become spaces, whitespace is collapsed and
 * the result capped at MAX_EXTRACTED_CHARS. Throws LimitExceeded past a limit (HTML too deep, a
 * DOCX that unpacks too large), Unreadable or the parser's error for a damaged file. Its time and
 * memory are bounded by the worker thread it runs in (text-work.ts).
 */
export async function extractText(bytes: Uint8Array, mimeType: string, name: string, limits: ExtractLimits): Promise<string> {
  const mime = mimeType.toLowerCase().split(';')[0]!.trim();
  let text = '';
  if (isPdf(mime, name)) text = await pdfText(bytes);
  else if (isDocx(mime, name))
    text = await docxText(bytes, { maxEntries: MAX_ZIP_ENTRIES, maxUnpackedBytes: limits.maxUnpackedBytes, maxChars: RAW_CHARS });
  else if (isHtml(mime, name))
    text = sanitizeDescription(new TextDecoder().decode(bytes.subarray(0, HTML_BYTES)), { maxDepth: limits.maxDepth }).text;
  // At most four bytes a character: the text wanted is in the file's first bytes.
  else if (isText(mime, name)) text = new TextDecoder().decode(bytes.subarray(0, RAW_CHARS * 4));
  // Control characters (PDF artefacts) would be escaped to six bytes each in the event's JSON.
  return (
    text
      .slice(0, RAW_CHARS)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is replaced
      .replace(/[\u0000-\u001f\u007f]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, MAX_EXTRACTED_CHARS)
  );
}
