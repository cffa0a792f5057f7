import type { Logger } from '@kn/telemetry';
import { sanitizeDescription } from './html.ts';

/** Events must stay well below the NATS message limit (1 MiB by default). */
export const MAX_EXTRACTED_CHARS = 100_000;

const isPdf = (mime: string, name: string) => mime === 'application/pdf' || /\.pdf$/i.test(name);
const isDocx = (mime: string, name: string) =>
  mime === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' || /\.docx$/i.test(name);
const isHtml = (mime: string, name: string) => mime === 'text/html' || mime === 'application/xhtml+xml' || /\.x?html?$/i.test(name);
const isText = (mime: string, name: string) => mime.startsWith('text/') || /\.(txt|md|csv|log)$/i.test(name);

/**
 * Searchable text of an attachment: plain text, HTML (tags dropped), PDF (unpdf, pure JS) and
 * DOCX (mammoth). Anything else, or a file that cannot be parsed, gives ''. Whitespace is
 * collapsed and the result capped at MAX_EXTRACTED_CHARS.
 */
export async function extractText(bytes: Uint8Array, mimeType: string, name: string, logger?: Logger): Promise<string> {
  const mime = mimeType.toLowerCase().split(';')[0].trim();
  let text = '';
  try {
    if (isPdf(mime, name)) {
      const { extractText: pdfText, getDocumentProxy } = await import('unpdf');
      const pdf = await getDocumentProxy(new Uint8Array(bytes));
      const result = await pdfText(pdf, { mergePages: true });
      text = result.text;
    } else if (isDocx(mime, name)) {
      const mammoth = await import('mammoth');
      const result = await (mammoth.default ?? mammoth).extractRawText({ buffer: Buffer.from(bytes) });
      text = result.value;
    } else if (isHtml(mime, name)) {
      text = sanitizeDescription(new TextDecoder().decode(bytes)).text;
    } else if (isText(mime, name)) {
      text = new TextDecoder().decode(bytes);
    }
  } catch (err) {
    logger?.warn({ err, mime_type: mime }, 'could not extract text from an attachment');
    text = '';
  }
  // Control characters (PDF artefacts) would be escaped to six bytes each in the event's JSON.
  const printable = [...text.slice(0, MAX_EXTRACTED_CHARS * 2)]
    .map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c))
    .join('');
  return printable.replace(/\s+/g, ' ').trim().slice(0, MAX_EXTRACTED_CHARS);
}
