// What reading what users write and upload costs (issue 55): for each parser of the content service
// (description sanitizer, HTML, PDF and DOCX attachments) the largest input it accepts, and inputs
// past its limits: the answer, its time, the content process's memory (RSS sampled every 20 ms:
// peak, and growth over the start of the request), the slowest GET /categories of another client
// meanwhile, and the longest pause of the content process's event loop. Users, content and gateway
// run as separate processes with their default limits. Run: pnpm bench:bounded-work

import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { docxOf, pdfOfPages } from '../test/documents.ts';
import { bearer, benchSpace, login, pauseMeter, referenceText, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const PORT = 18093;
const base = `http://127.0.0.1:${PORT}/api/v1`;
const MiB = 1024 * 1024;
/** ATTACHMENT_MAX_BYTES and BODY_LIMIT by default: the largest upload and JSON body. */
const MAX_UPLOAD = 25 * MiB;
const MAX_BODY = 10 * MiB;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** `unit` repeated to `bytes` (at most), as a string. */
const fill = (unit: string, bytes: number, head = '', tail = '') =>
  head + unit.repeat(Math.floor((bytes - head.length - tail.length) / unit.length)) + tail;

const lorem =
  '<p>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, <a href="https://example.com/a">sed do</a> eiusmod tempor incididunt.</p>';
const paragraph =
  '<w:p><w:r><w:t xml:space="preserve">Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod. </w:t></w:r></w:p>';
const textPage = (n: number) =>
  `BT /F1 10 Tf 72 760 Td 12 TL ${Array.from({ length: 60 }, (_, line) => `(Page ${n} line ${line} of a long report on brewing and hops.) '`).join(' ')} ET`;
/** Drawing operators without text: what pdf.js reads through to find none. */
const drawing = (bytes: number) => `${fill('0 0 m 612 792 l S ', bytes - 64)} BT /F1 12 Tf 72 700 Td (one line) Tj ET`;

const space = await benchSpace();
const env = serviceEnv(space, PORT);
const started: ChildProcess[] = [];
try {
  started.push(await startProcess('services/users/src/main.ts', env, 'users service ready'));
  const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
  started.push(content);
  started.push(await startProcess('gateway/src/main.ts', env, 'gateway listening'));
  const headers = bearer(await login(base));
  const question = (await (
    await fetch(`${base}/questions`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Where the attachments of the benchmark go', description: '<p>bench</p>' }),
    })
  ).json()) as { id: number };

  const describe = (description: string) => () =>
    fetch(`${base}/questions`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'A question of the benchmark', description }),
    });
  const upload = (bytes: Buffer | string, filename: string, type: string) => () => {
    const form = new FormData();
    form.append('file', new Blob([typeof bytes === 'string' ? Buffer.from(bytes) : bytes], { type }), filename);
    return fetch(`${base}/questions/${question.id}/attachments`, { method: 'POST', headers, body: form });
  };
  const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

  const cases: Array<{ parser: string; input: string; bytes: number; send: () => Promise<Response> }> = [];
  const add = (parser: string, input: string, body: string | Buffer, send: () => Promise<Response>) =>
    cases.push({ parser, input, bytes: Buffer.byteLength(body), send });

  // The JSON of the body (quotes escaped) within BODY_LIMIT.
  const ordinary = fill(lorem, Math.floor(((MAX_BODY - 1024) * lorem.length) / JSON.stringify(lorem).length));
  add('description', 'ordinary HTML, as much as a 10 MiB body holds (BODY_LIMIT)', ordinary, describe(ordinary));
  const paragraphs = fill('<p>', MAX_BODY - 1024);
  add('description', 'unclosed <p>, 10 MiB (slowest HTML measured)', paragraphs, describe(paragraphs));
  const unclosed = fill('<i>', 2 * MiB);
  add('description', 'unclosed <i>, 2 MiB', unclosed, describe(unclosed));
  const html = fill(lorem, MAX_UPLOAD - 1024, '<html><body>', '</body></html>');
  add('HTML attachment', 'ordinary HTML, 25 MiB (ATTACHMENT_MAX_BYTES)', html, upload(html, 'page.html', 'text/html'));
  const deepHtml = fill('<i>', 2 * MiB, '<html><body>');
  add('HTML attachment', 'unclosed <i>, 2 MiB', deepHtml, upload(deepHtml, 'deep.html', 'text/html'));
  const docx = docxOf(Buffer.from(fill(paragraph, 16 * MiB - 256)));
  add('DOCX', 'document.xml of 16 MiB (DOCUMENT_MAX_UNPACKED_BYTES)', docx, upload(docx, 'long.docx', DOCX));
  const tags = docxOf(Buffer.from(fill('<w:r><w:rPr/></w:r>', 16 * MiB - 256)));
  add('DOCX', 'document.xml of 16 MiB of tags without text', tags, upload(tags, 'empty.docx', DOCX));
  const bomb = docxOf(Buffer.from(fill(paragraph, 66_000_000)));
  add('DOCX', 'document.xml of 66 MB', bomb, upload(bomb, 'bomb.docx', DOCX));
  const pages: string[] = [];
  for (let size = 0, n = 1; size < MAX_UPLOAD - 64 * 1024; n++) {
    pages.push(textPage(n));
    // With its page object, the stream's frame and two xref entries.
    size += pages.at(-1)!.length + 320;
  }
  const textPdf = pdfOfPages(pages);
  add(
    'PDF',
    `${pages.length} pages of text, ${(textPdf.length / MiB).toFixed(1)} MiB`,
    textPdf,
    upload(textPdf, 'report.pdf', 'application/pdf'),
  );
  const drawn = pdfOfPages([drawing(MAX_UPLOAD - 4096)]);
  add('PDF', 'one page of 25 MiB of drawing, one line of text', drawn, upload(drawn, 'drawing.pdf', 'application/pdf'));
  const unpacked = Buffer.concat([Buffer.alloc(512 * MiB, '0 0 m 612 792 l S '), Buffer.from(' BT /F1 12 Tf 72 700 Td (one line) Tj ET')]);
  const packed = pdfOfPages([deflateSync(unpacked).toString('latin1')], { filter: 'FlateDecode' });
  add('PDF', 'one page whose deflated stream unpacks to 512 MiB of drawing', packed, upload(packed, 'packed.pdf', 'application/pdf'));

  const rows = [];
  for (const c of cases) {
    const pause = await pauseMeter({ content: content.pid! });
    const before = rssMiB(content.pid!);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(content.pid!));
    }, 20);
    let done = false;
    let slowest = 0;
    let reads = 0;
    const reading = (async () => {
      while (!done) {
        const at = performance.now();
        const res = await fetch(`${base}/categories`, { headers });
        await res.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - at);
        reads++;
      }
    })();
    const at = performance.now();
    const res = await c.send();
    const body = (await res.json()) as { code?: string; message?: string };
    const ms = performance.now() - at;
    done = true;
    await reading;
    clearInterval(sampler);
    rows.push({
      parser: c.parser,
      input: c.input,
      sent_mib: Number((c.bytes / MiB).toFixed(2)),
      answer: `${res.status}${body.code ? ` ${body.code}` : ''}`,
      ms: Math.round(ms),
      content_rss_peak_mib: Math.round(peak),
      rss_growth_mib: Math.round(peak - before),
      reads,
      slowest_read_ms: Math.round(slowest),
      longest_pause: await pause(),
    });
    if (res.status >= 400) console.log(`${c.parser}, ${c.input}: ${res.status} ${body.code} ${body.message}`);
  }
  report('Bounded work: each parser at its largest input and past its limits (issue 55)', 'pnpm bench:bounded-work', rows);
  const worst = Math.max(...rows.map((r) => r.slowest_read_ms));
  console.log(
    `headline: slowest read of another client while the content service parsed ${rows.length} inputs up to 25 MiB: ${worst} ms; ${referenceText()}`,
  );
} finally {
  for (const child of started.reverse()) await stopProcess(child);
  await space.drop();
}
