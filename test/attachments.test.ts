import { createHash } from 'node:crypto';
import { loadConfig as gatewayConfig, start as startGateway } from '@kn/gateway';
import supertest from 'supertest';
import { docxWith, pdfWith, storedAttachmentObjects } from './documents.ts';
import { API, contentEvents, publishedQuestion, publishedSolution } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

let system: System;
let poser: Awaited<ReturnType<System['createUser']>>;
let author: Awaited<ReturnType<System['createUser']>>;
let other: Awaited<ReturnType<System['createUser']>>;
const MAX = 64 * 1024;

beforeAll(async () => {
  system = await startSystem({ ATTACHMENT_MAX_BYTES: String(MAX) });
  poser = await system.createUser();
  author = await system.createUser();
  other = await system.createUser();
});
afterAll(() => system?.stop());

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('upload to a question: 201 Attachment, listed, downloaded with its content type, text in the event', async () => {
  const q = await publishedQuestion(system, poser.token);
  const bytes = Buffer.from('Kubernetes pod eviction explained in plain words.\n');
  const res = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', bytes, { filename: '../notes.txt', contentType: 'text/plain' });
  expect(res.status).toBe(201);
  expect(Object.keys(res.body).sort()).toEqual(['created', 'hash', 'id', 'link', 'mime_type', 'name', 'size']);
  expect(res.body).toMatchObject({
    name: 'notes.txt',
    mime_type: 'text/plain',
    size: bytes.length,
    hash: sha256(bytes),
    link: `${API}/attachments/${res.body.id}/file`,
  });

  const list = await system.api.get(`${API}/questions/${q}/attachments`).set(...other.auth);
  expect(list.status).toBe(200);
  expect(list.body).toEqual({ total: 1, items: [res.body] });

  const file = await system.api.get(`${API}/attachments/${res.body.id}/file`).set(...other.auth);
  expect(file.status).toBe(200);
  expect(file.headers['content-type']).toMatch(/^text\/plain/);
  expect(file.headers['x-content-type-options']).toBe('nosniff');
  expect(file.text).toBe(bytes.toString());
  expect(file.headers['content-disposition']).toBe(`attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`);

  const event = (await contentEvents(system, 'content.attachment.added.v1')).find((e) => e.data.attachment.id === res.body.id);
  expect(event?.data.text).toBe('Kubernetes pod eviction explained in plain words.');
  expect(event?.data.question.id).toBe(q);
});

test('a UTF-8 file name round-trips: stored, listed, in the event, and in the download’s filename*', async () => {
  const q = await publishedQuestion(system, poser.token);
  const name = 'Übersicht (März) – 日本語.txt';
  // As browsers and HTTP libraries send it: the name's UTF-8 bytes in filename="…".
  const res = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.from('Zusammenfassung'), { filename: name, contentType: 'text/plain' });
  expect(res.status).toBe(201);
  expect(res.body.name).toBe(name);
  const list = await system.api.get(`${API}/questions/${q}/attachments`).set(...other.auth);
  expect(list.body.items.map((a: { name: string }) => a.name)).toEqual([name]);
  const event = (await contentEvents(system, 'content.attachment.added.v1')).find((e) => e.data.attachment.id === res.body.id);
  expect(event?.data.attachment.name).toBe(name);

  const file = await system.api.get(`${API}/attachments/${res.body.id}/file`).set(...other.auth);
  expect(file.status).toBe(200);
  const disposition = file.headers['content-disposition'] as string;
  // RFC 6266: an ASCII stand-in in filename, the name itself in filename* (RFC 8187: UTF-8, percent-encoded attr-chars only).
  const [, fallback, encoded] = /^attachment; filename="([^"]*)"; filename\*=UTF-8''([^;\s]+)$/.exec(disposition) ?? [];
  expect(fallback).toBe('_bersicht (M_rz) _ ___.txt');
  expect(encoded).toMatch(/^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
  expect(decodeURIComponent(encoded!)).toBe(name);
});

test('text is extracted from PDF and HTML; binary downloads are byte-exact', async () => {
  const q = await publishedQuestion(system, poser.token);
  const s = await publishedSolution(system, author.token, q);
  const pdf = pdfWith('Quarterly capacity planning');
  const up = await system.api
    .post(`${API}/solutions/${s}/attachments`)
    .set(...author.auth)
    .attach('file', pdf, { filename: 'plan.pdf', contentType: 'application/pdf' });
  expect(up.status).toBe(201);
  const html = await system.api
    .post(`${API}/solutions/${s}/attachments`)
    .set(...author.auth)
    .attach('file', Buffer.from('<html><body><h1>Runbook</h1><script>evil()</script><p>Restart the broker</p></body></html>'), {
      filename: 'runbook.html',
      contentType: 'text/html',
    });
  expect(html.status).toBe(201);
  const docx = await system.api
    .post(`${API}/solutions/${s}/attachments`)
    .set(...author.auth)
    .attach('file', docxWith('Failover procedure for the database'), {
      filename: 'failover.docx',
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
  expect(docx.status).toBe(201);
  const events = await contentEvents(system, 'content.attachment.added.v1');
  expect(events.find((e) => e.data.attachment.id === up.body.id)?.data.text).toContain('Quarterly capacity planning');
  expect(events.find((e) => e.data.attachment.id === docx.body.id)?.data.text).toBe('Failover procedure for the database');
  expect(events.find((e) => e.data.attachment.id === up.body.id)?.data.attachment.solution_id).toBe(s);
  expect(events.find((e) => e.data.attachment.id === html.body.id)?.data.text).toBe('Runbook Restart the broker');

  const list = await system.api.get(`${API}/solutions/${s}/attachments`).set(...other.auth);
  expect(list.body.total).toBe(3);
  expect((await system.api.get(`${API}/questions/${q}/attachments`).set(...other.auth)).body.total).toBe(0);

  const binary = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
  const bin = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', binary, { filename: 'blob.bin', contentType: 'application/octet-stream' });
  expect(bin.status).toBe(201);
  const down = await system.api
    .get(`${API}/attachments/${bin.body.id}/file`)
    .set(...other.auth)
    .buffer(true)
    .parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });
  expect(down.headers['content-type']).toBe('application/octet-stream');
  expect((down.body as Buffer).equals(binary)).toBe(true);
});

test('too large (413 FileTooLarge), empty (400), no file (400), not multipart (415), others’ questions (403), missing (404): nothing stored', async () => {
  const q = await publishedQuestion(system, poser.token);
  const big = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.alloc(MAX + 1, 1), 'big.bin');
  expect(big.status).toBe(413);
  expect(big.body.code).toBe('FileTooLarge');
  const exact = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.alloc(MAX, 1), 'exact.bin');
  expect(exact.status).toBe(201);

  const empty = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.alloc(0), 'empty.txt');
  expect(empty.status).toBe(400);
  expect(empty.body.code).toBe('ValidationError');
  const noFile = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .field('other', 'x');
  expect(noFile.status).toBe(400);
  const json = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .send({ file: 'x' });
  expect(json.status).toBe(415);
  const malformed = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .set('content-type', 'multipart/form-data; boundary=xyz')
    .send('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated');
  expect(malformed.status).toBe(400);
  const noBoundary = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .set('content-type', 'multipart/form-data')
    .send('x');
  expect([400, 415]).toContain(noBoundary.status);
  const foreign = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...other.auth)
    .attach('file', Buffer.from('x'), 'x.txt');
  expect(foreign.status).toBe(403);
  const missing = await system.api
    .post(`${API}/questions/999999/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.from('x'), 'x.txt');
  expect(missing.status).toBe(404);
  const anonymous = await system.api.post(`${API}/questions/${q}/attachments`).attach('file', Buffer.from('x'), 'x.txt');
  expect(anonymous.status).toBe(401);

  expect((await system.api.get(`${API}/questions/${q}/attachments`).set(...poser.auth)).body.total).toBe(1);
  // Only the one accepted upload's bytes remain in the object store (refused ones were removed).
  const names = await system.services.content.runtime.db.selectFrom('attachments').select('object_name').execute();
  expect(await storedAttachmentObjects(system)).toEqual(names.map((n) => n.object_name).sort());
});

test('delete: uploader, parent author or admin; 204 then 404', async () => {
  const q = await publishedQuestion(system, poser.token);
  const up = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.from('delete me'), 'd.txt');
  expect((await system.api.delete(`${API}/attachments/${up.body.id}`).set(...other.auth)).status).toBe(403);
  expect((await system.api.delete(`${API}/attachments/${up.body.id}`).set(...poser.auth)).status).toBe(204);
  expect((await system.api.delete(`${API}/attachments/${up.body.id}`).set(...poser.auth)).status).toBe(404);
  expect((await system.api.get(`${API}/attachments/${up.body.id}/file`).set(...poser.auth)).status).toBe(404);
  expect((await system.api.get(`${API}/attachments/999999/file`).set(...poser.auth)).status).toBe(404);
  expect((await system.api.get(`${API}/solutions/999999/attachments`).set(...poser.auth)).status).toBe(404);
  expect((await contentEvents(system, 'content.attachment.deleted.v1')).some((e) => e.data.attachment.id === up.body.id)).toBe(true);
});

test('another gateway instance serves the bytes another one received (shared object store)', async () => {
  const q = await publishedQuestion(system, poser.token);
  const bytes = Buffer.from('shared between instances');
  const up = await system.api
    .post(`${API}/questions/${q}/attachments`)
    .set(...poser.auth)
    .attach('file', bytes, 'shared.txt');
  expect(up.status).toBe(201);
  const second = await startGateway(gatewayConfig(system.env));
  try {
    const res = await supertest(second.url)
      .get(`${API}/attachments/${up.body.id}/file`)
      .set(...other.auth);
    expect(res.status).toBe(200);
    expect(res.text).toBe(bytes.toString());
  } finally {
    await second.stop();
  }
});
