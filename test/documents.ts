// Files the tests upload, built in memory (a PDF, a zip, a DOCX), and what the attachment object
// store holds: one set, so that a test file does not write its own.
import { crc32, deflateRawSync } from 'node:zlib';
import type { System } from './system.ts';

/**
 * A PDF of these pages, each given as its content stream (latin1; `filter` names how it is encoded),
 * offsets computed, so pdf.js reads it without repair.
 */
export function pdfOfPages(contents: string[], { filter }: { filter?: string } = {}) {
  const pages = contents.length;
  // 1 catalog, 2 pages, 3 the font; then each page and its content stream.
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${contents.map((_, i) => `${4 + 2 * i} 0 R`).join(' ')}] /Count ${pages} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...contents.flatMap((content, i) => [
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * i} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      `<< /Length ${content.length}${filter ? ` /Filter /${filter}` : ''} >>\nstream\n${content}\nendstream`,
    ]),
  ];
  const chunks = ['%PDF-1.4\n'];
  let length = chunks[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const object = `${i + 1} 0 obj\n${body}\nendobj\n`;
    chunks.push(object);
    length += object.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)];
  chunks.push(...xref, `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`);
  return Buffer.from(chunks.join(''), 'latin1');
}

/** A one-page PDF showing `text`. */
export const pdfWith = (text: string) => pdfOfPages([`BT /F1 24 Tf 72 700 Td (${text}) Tj ET`]);

/** A zip of these entries, stored, or deflated with `deflate` (sizes in the headers as they are). */
export function zip(entries: Record<string, string | Buffer>, { deflate = false } = {}) {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const method = deflate ? 8 : 0;
  for (const [name, content] of Object.entries(entries)) {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const packed = deflate ? deflateRawSync(data, { level: 9 }) : data;
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, packed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(entries).length, 8);
  end.writeUInt16LE(Object.keys(entries).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const WORD = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** A DOCX whose body is `xml` (WordprocessingML inside `<w:body>`), deflated like Word's. */
export function docxOf(body: string | Buffer) {
  const head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${WORD}"><w:body>`;
  const tail = '</w:body></w:document>';
  return zip(
    {
      '[Content_Types].xml':
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      '_rels/.rels':
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      'word/document.xml': typeof body === 'string' ? head + body + tail : Buffer.concat([Buffer.from(head), body, Buffer.from(tail)]),
    },
    { deflate: true },
  );
}

/** A DOCX of one paragraph of `text`. */
export const docxWith = (text: string) => docxOf(`<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`);

/** A small DOCX whose document part unpacks to about `bytes` of paragraphs (a zip bomb of ordinary XML). */
export function docxUnpackingTo(bytes: number) {
  const paragraph = Buffer.from('<w:p><w:r><w:t>All work and no play makes Jack a dull boy.</w:t></w:r></w:p>');
  const body = Buffer.alloc(Math.ceil(bytes / paragraph.length) * paragraph.length);
  for (let at = 0; at < body.length; at += paragraph.length) paragraph.copy(body, at);
  return docxOf(body);
}

/** The names of the objects in the attachment object store (each object's last metadata message). */
export async function storedAttachmentObjects(system: System): Promise<string[]> {
  const { bus } = system.services.content.runtime;
  const bucket = `${bus.streamName('content')}_ATTACHMENTS`;
  const info = await bus.jsm.streams.info(`OBJ_${bucket}`, { subjects_filter: `$O.${bucket}.M.>` }).catch((err: Error) => {
    // The bucket is made by the first upload.
    if (err.name === 'StreamNotFoundError') return null;
    throw err;
  });
  if (!info) return [];
  const stored: string[] = [];
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const msg = await bus.jsm.streams.getMessage(`OBJ_${bucket}`, { last_by_subj: subject });
    const meta = msg?.json<{ name: string; deleted?: boolean }>();
    if (meta && !meta.deleted) stored.push(meta.name);
  }
  return stored.sort();
}
