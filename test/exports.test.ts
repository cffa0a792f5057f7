import { type ChildProcess, spawn } from 'node:child_process';
import { createDb } from '@kn/db';
import * as exportsModule from '@kn/exports';
import { waitFor } from '@kn/testing';
import JSZip from 'jszip';
import { SaxesParser } from 'saxes';
import { validateXML } from 'xmllint-wasm';
import { API, newQuestion, publishedQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * Exports through the gateway with the whole system running (real Postgres and NATS): an
 * administrator triggers both exports, polls them, downloads them, reads the UTF-16LE TSV and
 * validates the XML against the served XSD with libxml2 (xmllint-wasm).
 */

let system: System;
let admin: [string, string];
const people: Record<string, { user: { id: number }; token: string }> = {};
const ids: Record<string, number> = {};
let brewingTagId: string;

const binary = (res: any, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

async function comment(token: string, path: string, description: string) {
  const res = await system.api
    .post(`${API}${path}/comments`)
    .set(...bearer(token))
    .send({ description });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

const question = async (token: string, title: string, description: string, tags: string[]) =>
  (await newQuestion(system, token, { title, description, tags })).id;

/** The export record once it is no longer processing. */
async function exportDone(kind: 'topic-content' | 'content', id: number, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const res = await system.api.get(`${API}/export/${kind}/${id}`).set(...admin);
      expect(res.status).toBe(200);
      return res.body.status !== 'processing' && res.body;
    },
    { timeoutMs, what: `export ${id} to finish` },
  );
}

async function download(kind: 'topic-content' | 'content', id: number) {
  const res = await system.api
    .get(`${API}/export/${kind}/${id}/file`)
    .set(...admin)
    .buffer(true)
    .parse(binary);
  expect(res.status).toBe(200);
  return res;
}

async function unzipXml(zip: Buffer) {
  const archive = await JSZip.loadAsync(zip);
  const names = Object.keys(archive.files);
  expect(names).toHaveLength(1);
  return { name: names[0]!, xml: await archive.file(names[0]!)!.async('string') };
}

async function servedXsd() {
  const res = await system.api.get(`${API}/public/export/content_export.xsd`).buffer(true).parse(binary);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/xml/);
  return res.body.toString('utf8');
}

async function validate(xml: string) {
  const result = await validateXML({
    xml: [{ fileName: 'export.xml', contents: xml }],
    schema: [{ fileName: 'content_export.xsd', contents: await servedXsd() }],
    initialMemoryPages: 512,
    maxMemoryPages: 4096,
  });
  return result;
}

interface Node {
  name: string;
  attributes: Record<string, string>;
  children: Node[];
  text: string;
}
/** A small DOM of the export (saxes), to assert on data rather than on strings. */
function parseXml(xml: string): Node {
  const parser = new SaxesParser({ xmlns: false });
  const root: Node = { name: '#document', attributes: {}, children: [], text: '' };
  const stack: Node[] = [root];
  parser.on('opentag', (tag) => {
    const node: Node = { name: tag.name, attributes: tag.attributes as Record<string, string>, children: [], text: '' };
    stack.at(-1)!.children.push(node);
    stack.push(node);
  });
  parser.on('text', (t) => {
    stack.at(-1)!.text += t;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close();
  return root.children[0]!;
}
const child = (node: Node, name: string) => node.children.find((c) => c.name === name);
const children = (node: Node, name: string) => node.children.filter((c) => c.name === name);

async function streamEvents(subject: string) {
  const { runtime } = system.services.exports;
  await runtime.relay.flush();
  const bus = runtime.bus;
  const stream = bus.streamName('exports');
  const info = await bus.jsm.streams.info(stream);
  const out: Array<{ subject: string; data: any }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!msg) continue;
    const envelope = msg.json<{ subject: string; data: any }>();
    if (envelope.subject === subject) out.push(envelope);
  }
  return out;
}

beforeAll(async () => {
  system = await startSystem({ EXPORT_ACK_WAIT_MS: '3000' });
  admin = bearer(system.adminToken);
  people.poser = await system.createUser({ firstname: 'Paula', lastname: 'Poser' });
  people.solver = await system.createUser({ firstname: 'Sam', lastname: 'Solver' });
  const { poser, solver } = people as Required<typeof people>;

  ids.q1 = await question(
    poser!.token,
    'How do I brew a Belgian tripel at home?',
    '<p>First line\twith a tab</p>\n<p>Second line &amp; a back\\slash</p>',
    ['brewing', 'belgian'],
  );
  ids.s1a = await publishedSolution(system, solver!.token, ids.q1, '<p>Candi sugar\tand a warm ferment.</p>\n<p>Then wait.</p>');
  ids.s1b = await publishedSolution(system, poser!.token, ids.q1, '<p>Answering myself: bottle condition it 😀.</p>');
  ids.s1c = await publishedSolution(system, solver!.token, ids.q1, '<p>This one gets deleted.</p>');
  expect((await system.api.delete(`${API}/solutions/${ids.s1c}`).set(...admin)).status).toBe(204);
  ids.c1 = await comment(solver!.token, `/questions/${ids.q1}`, '<p>Which yeast do you use? \u0001 <b>bold</b></p>');
  ids.c2 = await comment(poser!.token, `/solutions/${ids.s1a}`, '<p>Thanks, Sam!</p>');
  ids.q2 = await question(solver!.token, 'Is dry cider sweeter when chilled?', '<p>Cider question</p>', ['cider']);
  ids.q3 = await publishedQuestion(system, poser!.token, 'Which hops suit a pale ale best?');
  ids.s3 = await publishedSolution(system, solver!.token, ids.q3, '<p>Cascade.</p>');
  expect((await system.api.delete(`${API}/questions/${ids.q3}`).set(...admin)).status).toBe(204);
  // A draft is nobody's export.
  await system.api
    .post(`${API}/questions`)
    .set(...bearer(poser!.token))
    .send({ title: 'A draft that stays private', description: '<p>draft</p>', tags: ['brewing'] });

  const q1 = await system.api.get(`${API}/questions/${ids.q1}`).set(...admin);
  brewingTagId = q1.body.concepts.find((c: { primary_label: string }) => c.primary_label === 'brewing').concept_id;
}, 120_000);
afterAll(() => system?.stop());

describe('topic-content export', () => {
  let record: any;

  test('POST answers at once with the record in status processing', async () => {
    const res = await system.api
      .post(`${API}/export/topic-content`)
      .set(...admin)
      .send({
        topics: [
          { global_concept_id: brewingTagId, label: 'Brewing' },
          { global_concept_id: 'concept-belgian', label: 'BELGIAN' },
        ],
      });
    expect(res.status).toBe(201);
    record = res.body;
    expect(record).toEqual({
      export_id: expect.any(Number),
      status: 'processing',
      start_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      end_date: null,
      file_size: null,
      count: null,
      filename: expect.stringMatching(/^Knowledge_Network_topic_content_export_\d{8}-\d{6}\.csv$/),
      message: null,
      user_id: 1,
    });
    const stamp = record.start_date.replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    expect(record.filename).toBe(`Knowledge_Network_topic_content_export_${stamp}.csv`);
  });

  test('finishes with end_date, file_size and count; the file is UTF-16LE TSV, one row per solution', async () => {
    const done = await exportDone('topic-content', record.export_id);
    expect(done).toMatchObject({ status: 'success', message: null, filename: record.filename, start_date: record.start_date });
    expect(Date.parse(done.end_date)).toBeGreaterThanOrEqual(Date.parse(done.start_date));

    const res = await download('topic-content', record.export_id);
    expect(res.headers['content-type']).toBe('text/csv; charset=UTF-16LE');
    expect(res.headers['content-disposition']).toContain(encodeURIComponent(record.filename));
    const bytes: Buffer = res.body;
    expect(bytes.length).toBe(done.file_size);
    expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    const text = bytes.subarray(2).toString('utf16le');
    expect(text.endsWith('\r\n')).toBe(true);
    const lines = text.slice(0, -2).split('\r\n');
    expect(lines[0]!.split('\t')).toEqual([
      'question_id',
      'question_published',
      'question_title',
      'question_description',
      'question_views',
      'topic_ids',
      'topic_labels',
      'solution_count',
      'solution_author',
      'solution_description',
    ]);
    const rows = lines.slice(1).map((l) => l.split('\t'));
    // q1: two live published solutions (the deleted one is left out); q2 has another topic; q3 is deleted.
    expect(done.count).toBe(2);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toHaveLength(10);
    const published = (await system.api.get(`${API}/questions/${ids.q1}`).set(...admin)).body.published as string;
    const expectedDate = published.replace('T', ' ').slice(0, 19);
    const [first, second] = rows as [string[], string[]];
    expect(first.slice(0, 8)).toEqual([
      String(ids.q1),
      expectedDate,
      'How do I brew a Belgian tripel at home?',
      expect.any(String),
      expect.stringMatching(/^\d+$/),
      `${brewingTagId}|concept-belgian`,
      'Brewing|BELGIAN',
      '2',
    ]);
    expect(first[1]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // TAB, newline and backslash inside a text are escaped, so the row stays one line.
    expect(first[3]).toContain('First line\\twith a tab');
    expect(first[3]).toContain('</p>\\n<p>');
    expect(first[3]).toContain('back\\\\slash');
    expect(first.slice(8)).toEqual(['Sam Solver', expect.stringContaining('Candi sugar\\tand a warm ferment.</p>\\n<p>Then wait.')]);
    expect(second.slice(0, 8)).toEqual(first.slice(0, 8));
    expect(second.slice(8)).toEqual(['Paula Poser', '<p>Answering myself: bottle condition it 😀.</p>']);
  });

  test('a question without solutions gets one row with empty solution columns', async () => {
    const res = await system.api
      .post(`${API}/export/topic-content`)
      .set(...admin)
      .send({ topics: [{ global_concept_id: 'cider-concept', label: 'cider' }] });
    const done = await exportDone('topic-content', res.body.export_id);
    expect(done).toMatchObject({ status: 'success', count: 1 });
    const text = (await download('topic-content', res.body.export_id)).body.subarray(2).toString('utf16le');
    const row = text.split('\r\n')[1]!.split('\t');
    expect(row).toEqual([
      String(ids.q2),
      expect.any(String),
      'Is dry cider sweeter when chilled?',
      '<p>Cider question</p>',
      '0',
      'cider-concept',
      'cider',
      '0',
      '',
      '',
    ]);
  });

  test('GET lists the exports of this kind, newest first; one record; unknown or other-kind ids are 404', async () => {
    const list = await system.api.get(`${API}/export/topic-content`).set(...admin);
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThanOrEqual(2);
    expect(list.body.map((r: { export_id: number }) => r.export_id)).toEqual(
      [...list.body.map((r: { export_id: number }) => r.export_id)].sort((a, b) => b - a),
    );
    expect(list.body).toContainEqual(expect.objectContaining({ export_id: record.export_id, status: 'success' }));
    expect((await system.api.get(`${API}/export/topic-content/999999`).set(...admin)).status).toBe(404);
    expect((await system.api.get(`${API}/export/content/${record.export_id}`).set(...admin)).status).toBe(404);
    expect((await system.api.get(`${API}/export/content/${record.export_id}/file`).set(...admin)).status).toBe(404);
  });

  test('an empty or malformed topic list is a validation error', async () => {
    for (const body of [{}, { topics: [] }, { topics: [{ label: 'x' }] }]) {
      const res = await system.api
        .post(`${API}/export/topic-content`)
        .set(...admin)
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ValidationError');
    }
  });
});

describe('content export', () => {
  test('default: anonymised, deleted content included and marked; valid against the served XSD', async () => {
    const res = await system.api.post(`${API}/export/content`).set(...admin);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'processing', count: null, file_size: null, end_date: null, message: null });
    expect(res.body.filename).toMatch(/^Knowledge_Network_content_export_\d{8}-\d{6}\.xml\.zip$/);
    const done = await exportDone('content', res.body.export_id);
    expect(done).toMatchObject({ status: 'success', count: 3 });

    const file = await download('content', res.body.export_id);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(file.body.length).toBe(done.file_size);
    const { name, xml } = await unzipXml(file.body);
    expect(name).toBe(done.filename.replace(/\.zip$/, ''));

    const result = await validate(xml);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);

    const root = parseXml(xml);
    expect(root.name).toBe('content_export');
    expect(root.attributes).toMatchObject({
      xmlns: exportsModule.CONTENT_EXPORT_NAMESPACE,
      network: 'Knowledge Network',
      anonymised: 'true',
      exclude_deleted: 'false',
      export_id: String(done.export_id),
    });
    const questions = children(root, 'question');
    expect(questions.map((q) => Number(q.attributes.id))).toEqual([ids.q1, ids.q2, ids.q3]);
    const [q1, q2, q3] = questions as [Node, Node, Node];
    expect(child(q1, 'title')!.text).toBe('How do I brew a Belgian tripel at home?');
    expect(child(q1, 'description')!.text).toBe('<p>First line\twith a tab</p>\n<p>Second line &amp; a back\\slash</p>');
    expect(children(child(q1, 'tags')!, 'tag').map((t) => t.text)).toEqual(['brewing', 'belgian']);
    expect(children(child(q1, 'tags')!, 'tag')[0]!.attributes.id).toBe(brewingTagId);
    // The poser is not exposed: not as the question's author, nor where they answered or commented.
    expect(child(q1, 'author')!.attributes).toEqual({ anonymised: 'true' });
    expect(xml).not.toContain('Paula');
    expect(xml).not.toContain(`<author id="${people.poser!.user.id}"`);
    const solutions = children(child(q1, 'solutions')!, 'solution');
    expect(solutions.map((s) => [Number(s.attributes.id), s.attributes.is_deleted])).toEqual([
      [ids.s1a, 'false'],
      [ids.s1b, 'false'],
      [ids.s1c, 'true'],
    ]);
    expect(q1.attributes.solution_count).toBe('3');
    expect(child(solutions[0]!, 'author')!.attributes).toEqual({
      id: String(people.solver!.user.id),
      firstname: 'Sam',
      lastname: 'Solver',
      is_deleted: 'false',
    });
    expect(child(solutions[1]!, 'author')!.attributes).toEqual({ anonymised: 'true' });
    expect(child(solutions[1]!, 'description')!.text).toBe('<p>Answering myself: bottle condition it 😀.</p>');
    const solutionComments = children(child(solutions[0]!, 'comments')!, 'comment');
    expect(solutionComments.map((c) => [Number(c.attributes.id), child(c, 'author')!.attributes])).toEqual([
      [ids.c2, { anonymised: 'true' }],
    ]);
    const questionComments = children(child(q1, 'comments')!, 'comment');
    expect(questionComments.map((c) => Number(c.attributes.id))).toEqual([ids.c1]);
    // A character XML cannot carry is dropped; markup in text stays text.
    expect(child(questionComments[0]!, 'description')!.text).not.toContain('\u0001');
    expect(child(questionComments[0]!, 'description')!.text).toContain('<b>bold</b>');
    expect(children(child(q2, 'solutions')!, 'solution')).toHaveLength(0);
    // Every question's poser, whoever it is.
    expect(child(q2, 'author')!.attributes).toEqual({ anonymised: 'true' });
    expect(q3.attributes.is_deleted).toBe('true');
  });

  test('anonymised=false exposes posers; exclude_deleted leaves deleted questions, solutions and comments out', async () => {
    const res = await system.api
      .post(`${API}/export/content`)
      .set(...admin)
      .send({ anonymised: false, exclude_deleted: true });
    expect(res.status).toBe(201);
    const done = await exportDone('content', res.body.export_id);
    expect(done).toMatchObject({ status: 'success', count: 2 });
    const { xml } = await unzipXml((await download('content', res.body.export_id)).body);
    expect((await validate(xml)).valid).toBe(true);
    const root = parseXml(xml);
    expect(root.attributes).toMatchObject({ anonymised: 'false', exclude_deleted: 'true' });
    const questions = children(root, 'question');
    expect(questions.map((q) => Number(q.attributes.id))).toEqual([ids.q1, ids.q2]);
    expect(child(questions[0]!, 'author')!.attributes).toEqual({
      id: String(people.poser!.user.id),
      firstname: 'Paula',
      lastname: 'Poser',
      is_deleted: 'false',
    });
    const solutions = children(child(questions[0]!, 'solutions')!, 'solution');
    expect(solutions.map((s) => Number(s.attributes.id))).toEqual([ids.s1a, ids.s1b]);
    expect(child(solutions[1]!, 'author')!.attributes.firstname).toBe('Paula');
  });

  test('the parameters may also come as query parameters', async () => {
    const res = await system.api.post(`${API}/export/content?anonymised=false&exclude_deleted=true`).set(...admin);
    expect(res.status).toBe(201);
    const done = await exportDone('content', res.body.export_id);
    expect(done).toMatchObject({ status: 'success', count: 2 });
    const { xml } = await unzipXml((await download('content', res.body.export_id)).body);
    expect(xml).toContain('Paula');
  });

  test('each export is requested and succeeds exactly once (events)', async () => {
    const list = (await system.api.get(`${API}/export/content`).set(...admin)).body as Array<{ export_id: number }>;
    const requested = await streamEvents('exports.export.requested.v1');
    const succeeded = await streamEvents('exports.export.succeeded.v1');
    for (const { export_id } of list) {
      expect(requested.filter((e) => e.data.export.export_id === export_id)).toHaveLength(1);
      const done = succeeded.filter((e) => e.data.export.export_id === export_id);
      expect(done).toHaveLength(1);
      expect(done[0]!.data).toMatchObject({ kind: 'content', export: { status: 'success' } });
    }
    expect(await streamEvents('exports.export.failed.v1')).toEqual([]);
  });

  test('the XSD is public and an invalid document fails it', async () => {
    const xsd = await servedXsd();
    expect(xsd).toBe(exportsModule.CONTENT_EXPORT_XSD);
    const invalid = await validate(
      `<?xml version="1.0"?><content_export xmlns="${exportsModule.CONTENT_EXPORT_NAMESPACE}" version="1"><question/></content_export>`,
    );
    expect(invalid.valid).toBe(false);
  });
});

describe('files and roles', () => {
  test('the file is 409 Conflict while processing and after an error', async () => {
    const db = system.services.exports.runtime.db;
    for (const status of ['processing', 'error'] as const) {
      const row = await db
        .insertInto('export_jobs')
        .values({
          kind: 'content',
          status,
          user_id: 1,
          network: 'n',
          parameters: '{"anonymised":true,"exclude_deleted":false}',
          filename: 'f.xml.zip',
          message: status === 'error' ? 'broken' : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const res = await system.api.get(`${API}/export/content/${row.id}/file`).set(...admin);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ code: 'Conflict', message: expect.any(String) });
      const record = await system.api.get(`${API}/export/content/${row.id}`).set(...admin);
      expect(record.body).toMatchObject({ status, end_date: null, file_size: null, count: null });
    }
  });

  test('only super_admin triggers; content_admin may read content exports; others get 403', async () => {
    const plain = await system.createUser();
    const contentAdmin = await system.createUser({}, ['content_admin']);
    for (const token of [plain.token, contentAdmin.token]) {
      expect((await system.api.post(`${API}/export/content`).set(...bearer(token))).status).toBe(403);
      const topic = await system.api
        .post(`${API}/export/topic-content`)
        .set(...bearer(token))
        .send({ topics: [{ global_concept_id: 'x', label: 'x' }] });
      expect(topic.status).toBe(403);
      expect(topic.body.code).toBe('Forbidden');
      expect((await system.api.get(`${API}/export/topic-content`).set(...bearer(token))).status).toBe(403);
    }
    expect((await system.api.get(`${API}/export/content`).set(...bearer(plain.token))).status).toBe(403);
    expect((await system.api.get(`${API}/export/content`).set(...bearer(contentAdmin.token))).status).toBe(200);
    expect((await system.api.get(`${API}/export/content`)).status).toBe(401);
  });
});

describe('long texts', () => {
  test('descriptions longer than one message arrive whole, surrogate pairs intact across the slices', async () => {
    // 16,380 + 240,000 UTF-16 code units: cut inline at 16,384 (inside an emoji), then fetched in 100,000-unit slices.
    const long = `<p>${'x'.repeat(16_380)}${'😀'.repeat(120_000)}</p>`;
    const id = await question(people.solver!.token, 'A question with a very long answer', '<p>short</p>', ['long']);
    await publishedSolution(system, people.solver!.token, id, long);
    const res = await system.api.post(`${API}/export/content`).set(...admin);
    const done = await exportDone('content', res.body.export_id);
    expect(done.status).toBe('success');
    const { xml } = await unzipXml((await download('content', res.body.export_id)).body);
    expect((await validate(xml)).valid).toBe(true);
    const q = children(parseXml(xml), 'question').find((n) => Number(n.attributes.id) === id)!;
    expect(child(children(child(q, 'solutions')!, 'solution')[0]!, 'description')!.text).toBe(long);

    const topic = await system.api
      .post(`${API}/export/topic-content`)
      .set(...admin)
      .send({ topics: [{ global_concept_id: 'long', label: 'long' }] });
    expect((await exportDone('topic-content', topic.body.export_id)).status).toBe('success');
    const row = (await download('topic-content', topic.body.export_id)).body.subarray(2).toString('utf16le').split('\r\n')[1].split('\t');
    expect(row[9]).toBe(long);
  });
});

describe('a worker that dies half-way', () => {
  let worker: ChildProcess | undefined;
  let replacement: Awaited<ReturnType<typeof exportsModule.start>> | undefined;
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await replacement?.stop();
  });

  test('is replaced: another instance finishes the job, exactly once', async () => {
    for (let i = 0; i < 8; i++)
      await question(people.solver!.token, `Filler question number ${i} about lagers`, `<p>filler ${i}</p>`, ['lager']);
    // The only instance is now a separate process that reads one question per page and stops
    // after the first page (a pause of ten minutes before the next): it is killed half-way.
    await system.services.exports.stop();
    const output: string[] = [];
    worker = spawn(process.execPath, ['services/exports/src/main.ts'], {
      env: { ...process.env, ...system.env, LOG_LEVEL: 'debug', EXPORT_PAGE_SIZE: '1', EXPORT_PAGE_DELAY_MS: '600000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    worker.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const seen = (text: string) => waitFor(() => output.join('').includes(text), { timeoutMs: 30_000, what: `"${text}" from the worker` });
    await seen('exports service ready');

    const res = await system.api
      .post(`${API}/export/content`)
      .set(...admin)
      .send({ anonymised: false });
    const id = res.body.export_id as number;
    await seen('export page read');
    const db = createDb<any>({ url: system.env.DATABASE_URL, schema: 'exports', poolSize: 1 });
    const before = await db.selectFrom('export_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await db.destroy();
    expect(before).toMatchObject({ status: 'processing', attempts: 1 });

    const exited = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGKILL');
    await exited;
    worker = undefined;

    replacement = await exportsModule.start(exportsModule.loadConfig({ ...system.env, EXPORT_ACK_WAIT_MS: '3000' }));
    const done = await exportDone('content', id, 60_000);
    expect(done).toMatchObject({ status: 'success', count: 12 });
    const after = await replacement.runtime.db.selectFrom('export_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(after.attempts).toBe(2);

    const { xml } = await unzipXml((await download('content', id)).body);
    expect((await validate(xml)).valid).toBe(true);
    expect(children(parseXml(xml), 'question')).toHaveLength(12);

    await replacement.runtime.relay.flush();
    const bus = replacement.runtime.bus;
    const stream = bus.streamName('exports');
    const info = await bus.jsm.streams.info(stream);
    const finished: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const msg = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      const envelope = msg?.json<{ subject: string; data: any }>();
      if (envelope && envelope.subject !== 'exports.export.requested.v1' && envelope.data.export.export_id === id)
        finished.push(envelope.subject);
    }
    expect(finished).toEqual(['exports.export.succeeded.v1']);
  }, 120_000);
});
