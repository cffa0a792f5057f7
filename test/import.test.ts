import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call } from '@kn/bus';
import { importOperations } from '@kn/contracts';
import { DumpError, type ImportSummary, importDump } from '@kn/stackexchange';
import { dataset } from '@kn/testing';
import { bearer, type System, startSystem } from './system.ts';

const BEER = dataset('stackexchange-beer');

let system: System;
let state: string;
let first: ImportSummary;
beforeAll(async () => {
  system = await startSystem();
  state = mkdtempSync(path.join(tmpdir(), 'kn-import-test-'));
  first = await importDump({ dir: BEER, bus: system.services.content.runtime.bus, stateDir: state, target: 'test' });
}, 180_000);
afterAll(async () => {
  await system?.stop();
  rmSync(state, { recursive: true, force: true });
});

const get = (url: string) => system.api.get(`/api/v1${url}`).set(...bearer(system.adminToken));
const db = () => system.services.content.runtime.db;
const questionId = async (post: number) =>
  (await db().selectFrom('questions').select('id').where('external_id', '=', `stackexchange:beer:post:${post}`).executeTakeFirstOrThrow())
    .id;

test('the whole beer dump: every question, answer, comment, user and tag of the dump', () => {
  expect(first.users.created).toBe(6863 + 1); // and the placeholder author of deleted accounts
  expect(first.questions).toEqual({ created: 1029, skipped: 0 });
  expect(first.solutions).toEqual({ created: 2277, skipped: 0 });
  expect(first.comments.created + first.orphans.comments).toBe(3509);
  expect(first.tags.created).toBeGreaterThanOrEqual(153);
  expect(first.questionLinks.created).toBeGreaterThan(100);
  expect(first.malformed.count).toBe(0);
});

test('questions, answers and comments come back through the API with the dates and authors of the dump', async () => {
  const id = await questionId(1);
  const res = await get(`/questions/${id}/complete`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    title: 'What is a citra hop, and how does it differ from other hops?',
    is_published: true,
    published: '2014-01-21T20:26:05.383Z',
    created: '2014-01-21T20:26:05.383Z',
    updated: '2014-01-21T22:04:34.977Z',
    concepts: [expect.objectContaining({ primary_label: 'hops' })],
  });
  expect(res.body.description).toContain('citra hops');
  expect(res.body.view_count).toBeGreaterThanOrEqual(2277);
  // Answer 4 is the accepted one (AcceptedAnswerId="4").
  const accepted = res.body.solutions.find((s: { accepted_by_question_poser: string | null }) => s.accepted_by_question_poser);
  const answer = await db()
    .selectFrom('solutions')
    .selectAll()
    .where('external_id', '=', 'stackexchange:beer:post:4')
    .executeTakeFirstOrThrow();
  expect(accepted.id).toBe(answer.id);
  expect(accepted.upvote_count).toBeGreaterThan(0);
  expect(accepted.rating).toBeGreaterThan(1);
  // The author of answer 4 is the imported user of the dump's OwnerUserId.
  const user = await get(accepted.user.replace('/api/v1', ''));
  expect(user.status).toBe(200);
  expect(user.body.email ?? '').toMatch(/@beer\.stackexchange\.invalid$|^$/);
  const question = await db().selectFrom('questions').select('author_id').where('id', '=', id).executeTakeFirstOrThrow();
  const poser = await get(`/users/${question.author_id}`);
  expect(poser.body).toMatchObject({ first_seen: expect.stringMatching(/^2014-01-21T/) });

  // Question 2 has 3 comments and 4 answers in the dump.
  const q2 = await questionId(2);
  const comments = await get(`/questions/${q2}/comments`);
  expect(comments.status).toBe(200);
  expect(comments.body.total).toBeGreaterThanOrEqual(3);
  for (const c of comments.body.items) expect(c.created < '2020-06-01').toBe(true);
  const complete = await get(`/questions/${q2}/complete`);
  expect(complete.body.solutions).toHaveLength(4);
  expect(complete.body.solution_count).toBe(4);
});

test('users keep their names and dates; tags and tag links exist', async () => {
  const search = await get('/users?query=Dalgas');
  expect(search.body.items[0]).toMatchObject({ firstname: 'Geoff', lastname: 'Dalgas', first_seen: '2014-01-21T20:21:18.797Z' });
  const tags = await get('/tags?query=hops');
  expect(tags.body.items).toContain('hops');
  const tag = await get('/tag-labels/hops');
  expect(tag.body.question_count).toBeGreaterThan(10);
  expect(first.tagLinks.created).toBeGreaterThan(0);
});

test('duplicate links can be looked up', async () => {
  const links = await call(system.services.content.runtime.bus, 'listQuestionLinks', importOperations.listQuestionLinks, {
    actor: null,
    params: undefined,
    query: { kind: 'duplicate', limit: 100, offset: 0 },
    body: undefined,
    requestId: 'test',
    url: '/internal',
  } as never);
  // 26 duplicate links in the dump; a few name a post that is not an imported question.
  expect(links.total).toBeGreaterThan(15);
  expect(links.total).toBeLessThanOrEqual(26);
  expect(links.items[0]).toMatchObject({ kind: 'duplicate', question_external_id: expect.stringMatching(/^stackexchange:beer:post:\d+$/) });
  const { question_id, linked_question_id } = links.items[0];
  const own = await get(`/questions/${question_id}/links`);
  expect(own.status).toBe(200);
  expect(own.body.items).toContainEqual(expect.objectContaining({ question_id, linked_question_id, kind: 'duplicate' }));
  const original = await get(`/questions/${linked_question_id}/links`);
  expect(original.body.items).toContainEqual(expect.objectContaining({ question_id, linked_question_id, kind: 'duplicate' }));
  expect((await get('/questions/999999/links')).status).toBe(404);
});

/** Subjects of the events in the content stream, counted, and the first imported event. */
async function contentSubjects() {
  const { runtime } = system.services.content;
  await runtime.relay.flush();
  const stream = runtime.bus.streamName('content');
  const info = await runtime.bus.jsm.streams.info(stream);
  const counts: Record<string, number> = {};
  let imported: { data: any } | undefined;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await runtime.bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!msg) continue;
    const envelope = msg.json<{ subject: string; data: any }>();
    counts[envelope.subject] = (counts[envelope.subject] ?? 0) + 1;
    if (envelope.subject === 'content.question.imported.v1' && envelope.data.external_id === 'stackexchange:beer:post:2')
      imported = envelope;
  }
  return { counts, imported };
}

test('one content.question.imported.v1 per question reaches the stream; nothing that notifies', async () => {
  const { counts, imported } = await contentSubjects();
  expect(counts['content.question.imported.v1']).toBe(1029);
  for (const subject of [
    'content.question.published.v1',
    'content.solution.published.v1',
    'content.comment.created.v1',
    'content.solution.accepted.v1',
  ])
    expect(counts[subject]).toBeUndefined();
  expect(imported?.data.question).toMatchObject({
    title: 'When was the first beer ever brewed?',
    tags: [expect.objectContaining({ label: 'history' })],
  });
  expect(imported?.data.solutions).toHaveLength(4);
  expect(imported?.data.solutions.filter((s: { accepted_by_question_poser: string | null }) => s.accepted_by_question_poser)).toHaveLength(
    1,
  );
  expect(imported?.data.comments.length).toBeGreaterThanOrEqual(3);
}, 60_000);

test('a second run creates nothing', async () => {
  const second = await importDump({ dir: BEER, bus: system.services.content.runtime.bus, stateDir: state, target: 'test' });
  for (const kind of ['users', 'tags', 'questions', 'solutions', 'comments', 'tagLinks', 'questionLinks'] as const)
    expect(second[kind].created).toBe(0);
  expect(second.questions.skipped).toBe(1029);
  expect((await contentSubjects()).counts['content.question.imported.v1']).toBe(1029);
}, 120_000);

// Small dumps written for the error cases.
function dump(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'stackexchange-tiny-'));
  const defaults: Record<string, string> = {
    'Users.xml': '<users><row Id="1" DisplayName="Ann Tiny" CreationDate="2015-01-01T00:00:00.000" /></users>',
    'Tags.xml': '<tags><row Id="1" TagName="tiny" Count="1" /></tags>',
    'Posts.xml':
      '<posts><row Id="1" PostTypeId="1" CreationDate="2015-02-01T10:00:00.000" Score="1" ViewCount="5" Body="&lt;p&gt;A tiny question body&lt;/p&gt;" OwnerUserId="1" Title="A tiny question about tiny things" Tags="&lt;tiny&gt;" />\n' +
      '<row Id="2" PostTypeId="2" ParentId="1" CreationDate="2015-02-02T10:00:00.000" Score="1" Body="&lt;p&gt;A tiny answer&lt;/p&gt;" />\n' +
      '<row Id="x" PostTypeId="2" ParentId="1" CreationDate="2015-02-02T10:00:00.000" Body="broken" /></posts>',
    'Comments.xml':
      '<comments><row Id="1" PostId="2" Text="tiny &lt;b&gt;comment&lt;/b&gt;" CreationDate="2015-02-03T10:00:00.000" UserId="1" /></comments>',
    'Votes.xml': '<votes><row Id="1" PostId="2" VoteTypeId="2" CreationDate="2015-02-03T00:00:00.000" /></votes>',
    'PostLinks.xml': '<postlinks></postlinks>',
  };
  for (const [name, content] of Object.entries({ ...defaults, ...files })) if (content !== '') writeFileSync(path.join(dir, name), content);
  return dir;
}

test('a malformed row is skipped and reported with its file and row number', async () => {
  const dir = dump({});
  try {
    const summary = await importDump({ dir, bus: system.services.content.runtime.bus, stateDir: state, target: 'test' });
    expect(summary.malformed.count).toBe(1);
    expect(summary.malformed.rows[0]).toMatchObject({ file: 'Posts.xml', index: 3, line: 3 });
    expect(summary.questions.created).toBe(1);
    expect(summary.solutions.created).toBe(1);
    expect(summary.comments.created).toBe(1);
    const q = (
      await db()
        .selectFrom('questions')
        .select('id')
        .where('external_id', 'like', `stackexchange:${summary.site}:post:1`)
        .executeTakeFirstOrThrow()
    ).id;
    const comments = await get(`/questions/${q}/comments`);
    // Comments are plain text in a dump: markup in them is text, not HTML.
    expect(comments.body.items[0].description).toBe('<p>tiny &lt;b&gt;comment&lt;/b&gt;</p>');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('a description past a limit is a malformed row, reported with its place and skipped; the rest is imported', async () => {
  // 300 elements open at once (the content service refuses more than 256), and a body longer than an import takes.
  const deep = '&lt;i&gt;'.repeat(300);
  const row = (attributes: string) => `<row CreationDate="2015-02-01T10:00:00.000" OwnerUserId="1" ${attributes} />`;
  const dir = dump({
    'Posts.xml': [
      `<posts>${row('Id="1" PostTypeId="1" Body="&lt;p&gt;A fine question&lt;/p&gt;" Title="A fine question about limits" Tags="&lt;tiny&gt;"')}`,
      row(`Id="2" PostTypeId="2" ParentId="1" Body="${deep}"`),
      row('Id="3" PostTypeId="2" ParentId="1" Body="&lt;p&gt;A fine answer&lt;/p&gt;"'),
      row(`Id="4" PostTypeId="1" Body="${deep}" Title="A question nested too deep"`),
      `${row(`Id="5" PostTypeId="1" Body="${'x'.repeat(1_000_001)}" Title="A question far too long"`)}</posts>`,
    ].join('\n'),
    'Comments.xml':
      '<comments><row Id="1" PostId="2" Text="on the refused answer" CreationDate="2015-02-03T10:00:00.000" UserId="1" />' +
      '<row Id="2" PostId="3" Text="on the fine answer" CreationDate="2015-02-03T10:00:00.000" UserId="1" /></comments>',
  });
  try {
    const summary = await importDump({ dir, bus: system.services.content.runtime.bus, stateDir: state, target: 'test' });
    expect(summary.malformed.rows).toEqual([
      { file: 'Posts.xml', index: 2, line: 2, reason: 'Body: the HTML is nested deeper than 256 elements' },
      { file: 'Posts.xml', index: 4, line: 4, reason: 'Body: the HTML is nested deeper than 256 elements' },
      { file: 'Posts.xml', index: 5, line: 5, reason: 'Body: longer than 1000000 characters' },
    ]);
    expect(summary.questions.created).toBe(1);
    expect(summary.solutions.created).toBe(1);
    expect(summary.comments.created).toBe(1);
    const imported = await db()
      .selectFrom('questions')
      .select('external_id')
      .where('external_id', 'like', `stackexchange:${summary.site}:post:%`)
      .execute();
    expect(imported.map((q) => q.external_id)).toEqual([`stackexchange:${summary.site}:post:1`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('a missing file and a file of another format stop the import with a clear error', async () => {
  const missing = dump({ 'Votes.xml': '' });
  const other = dump({ 'Posts.xml': '<feed><entry /></feed>' });
  const broken = dump({ 'Comments.xml': '<comments><row Id="1"' });
  try {
    await expect(importDump({ dir: missing, bus: system.services.content.runtime.bus, stateDir: state })).rejects.toThrow(
      /Votes\.xml is missing/,
    );
    await expect(importDump({ dir: other, bus: system.services.content.runtime.bus, stateDir: state })).rejects.toThrow(
      /Posts\.xml is not a Stack Exchange dump file: its root element is <feed>/,
    );
    await expect(importDump({ dir: broken, bus: system.services.content.runtime.bus, stateDir: state })).rejects.toBeInstanceOf(DumpError);
  } finally {
    for (const d of [missing, other, broken]) rmSync(d, { recursive: true, force: true });
  }
});

test('an interrupted import continues from its checkpoint', async () => {
  const dir = dump({});
  try {
    let stop = true;
    const interrupted = importDump({
      dir,
      bus: system.services.content.runtime.bus,
      stateDir: state,
      target: 'resume',
      progress: (phase) => {
        if (phase === 'tags' && stop) throw new Error('interrupted');
      },
    });
    await expect(interrupted).rejects.toThrow('interrupted');
    stop = false;
    const resumed = await importDump({ dir, bus: system.services.content.runtime.bus, stateDir: state, target: 'resume' });
    expect(resumed.resumed).toBe(true);
    expect(resumed.malformed.count).toBe(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('the command prints a progress bar on stderr and the summary; a wrong folder is a clear error', async () => {
  const dir = dump({});
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['packages/stackexchange/src/main.ts', ...args],
        { cwd: path.resolve(__dirname, '..'), env: { ...process.env, ...system.env, IMPORT_STATE_DIR: state, NODE_OPTIONS: '' } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  try {
    const ok = await run([dir]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/\[#+\] 100% questions 1\/1/);
    expect(ok.stdout).toMatch(/questions\s+1 created\s+0 skipped/);
    expect(ok.stdout).toMatch(/Posts\.xml row 3 \(line 3\): Id: an integer/);
    const missing = await run([path.join(dir, 'nope')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/import stopped: .*nope is not a folder/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
