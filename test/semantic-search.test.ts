import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath } from '@kn/embedding';
import { waitFor } from '@kn/testing';
import pg from 'pg';
import { API, newQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

// Meaning in search (issue 49): the real sentence encoder that infra/ensure-model.sh set up, on the
// real system. Other test files run lexical (test/system.ts names no model).
let system: System;
let token: string;
const ids: Record<string, number> = {};

const questions = {
  cardboard: {
    title: 'Why does my homebrew taste like wet cardboard?',
    description: 'After two weeks in the bottle the flavour turned stale and papery.',
  },
  hops: { title: 'Which hops give a citrus aroma?', description: 'Looking for grapefruit and orange notes in an IPA.' },
  lager: { title: 'How long should a lager condition?', description: 'I keep it cold for a month until serving.' },
};

beforeAll(async () => {
  system = await startSystem({ EMBEDDING_MODEL_PATH: defaultModelPath(), EMBEDDING_POLL_MS: '100' });
  token = (await system.createUser()).token;
  for (const [name, q] of Object.entries(questions)) ids[name] = (await newQuestion(system, token, q)).id;
  await system.embeddingsCaughtUp();
});
afterAll(() => system?.stop());

const index = async (authToken = system.adminToken) => system.api.get(`${API}/search/index`).set(...bearer(authToken));

test('every question is embedded within the catch-up, and the super_admin index view says so', async () => {
  const res = await index();
  expect(res.status).toBe(200);
  expect(res.body.embeddings).toEqual({ model: 'all-MiniLM-L6-v2-int8', state: 'ready', reason: null, embedded: 3, questions: 3 });
  expect((await index(token)).status).toBe(403);
});

test('a draft that says the same in other words finds the question (no word in common)', async () => {
  // "How many weeks must it rest chilled before pouring?" shares no word with the lager question
  // (what question search alone would need), only its meaning.
  const res = await system.api
    .get(`${API}/search/questions-similar`)
    .query({ query: 'How many weeks must it rest chilled before pouring?' })
    .set(...bearer(token));
  expect(res.status).toBe(200);
  // Question search of the text finds the cardboard question by "weeks" and the lager one by its
  // meaning alone; blended with the meaning, the lager one comes first. The hops question does neither.
  expect(res.body.items.map((i: { id: number }) => i.id)).toEqual([ids.lager, ids.cardboard]);

  // Question search: no text match at all, so the question found by its meaning is the only result.
  const search = await system.api
    .get(`${API}/questions`)
    .query({ query: 'rest chilled before pouring' })
    .set(...bearer(token));
  expect(search.status).toBe(200);
  expect(
    search.body.items.map((q: { id: number; search_metadata: { is_relevant: boolean } }) => [q.id, q.search_metadata.is_relevant]),
  ).toEqual([[ids.lager, false]]);
});

test("a question's similar questions weigh the meaning: the nearest topic first, above a question that shares its words", async () => {
  // Shares "IPA" and "aroma" with the hops question and no word with the cardboard one.
  const extra = await newQuestion(system, token, {
    title: "My IPA's aroma faded and went musty",
    description: 'It smells of an old attic now: oxidised?',
  });
  await system.embeddingsCaughtUp();
  const res = await system.api.get(`${API}/questions/${extra.id}/similar`).set(...bearer(token));
  expect(res.status).toBe(200);
  expect(res.body.items.map((i: { id: number }) => i.id).slice(0, 2)).toEqual([ids.cardboard, ids.hops]);
});

test('an edited question is embedded again from its new text', async () => {
  const edited = await system.api
    .put(`${API}/questions/${ids.hops}`)
    .set(...bearer(token))
    .send({ title: 'Which hops give a pine resin aroma?', description: 'Looking for dank, piney notes in an IPA.' });
  expect(edited.status).toBe(200);
  await system.embeddingsCaughtUp();
  const db = new pg.Client({ connectionString: system.env.DATABASE_URL });
  await db.connect();
  try {
    const { rows } = await db.query(
      `select t.source_hash = e.source_hash as current from search.question_texts t
       join search.question_embeddings e on e.question_id = t.question_id where t.question_id = $1`,
      [ids.hops],
    );
    expect(rows).toEqual([{ current: true }]);
  } finally {
    await db.end();
  }
});

test('any Unicode text is embedded or answered, never a 500: scripts without spaces, emoji, 1,000 characters, stop words, mixed languages', async () => {
  const texts = [
    '啤酒为什么有纸板味',
    'ビールの保存期間は？',
    '🍺🍺🍺 🤔',
    'the and of to a in'.repeat(1),
    'x'.repeat(1000),
    `${'Warum schmeckt mein Bier nach Pappe? '.repeat(20)}`.slice(0, 1000),
    'Why does my beer taste like карто́н and 纸板?',
  ];
  for (const text of texts) {
    const similar = await system.api
      .get(`${API}/search/questions-similar`)
      .query({ query: text })
      .set(...bearer(token));
    const search = await system.api
      .get(`${API}/questions`)
      .query({ query: text })
      .set(...bearer(token));
    expect([text, similar.status, search.status]).toEqual([text, 200, 200]);
  }
  // A question in another script is embedded too (it only means less to an English model).
  await newQuestion(system, token, { title: '啤酒为什么有纸板味？', description: '瓶装两周后味道变了。' });
  await system.embeddingsCaughtUp();
  expect((await index()).body.embeddings).toEqual(expect.objectContaining({ state: 'ready', embedded: 5, questions: 5 }));
});

test('texts of one time (an import writes thousands with one `updated`) are all embedded, page after page of the walk', async () => {
  for (let i = 0; i < 19; i++)
    await newQuestion(system, token, { title: `Batch question ${i} about yeast`, description: `Pitching rate number ${i}.` });
  await system.embeddingsCaughtUp();
  const db = new pg.Client({ connectionString: system.env.DATABASE_URL });
  await db.connect();
  try {
    // More texts than two pages of the walk, all with one time: only their ids order them.
    await db.query(`update search.question_texts set updated = now() - interval '1 hour'`);
    await db.query('delete from search.question_embeddings');
    await system.embeddingsCaughtUp();
    const { rows } = await db.query(
      `select count(*)::int as texts, count(e.question_id) filter (where e.source_hash = t.source_hash)::int as current
       from search.question_texts t left join search.question_embeddings e on e.question_id = t.question_id`,
    );
    expect(rows[0].texts).toBeGreaterThan(16);
    expect(rows[0].current).toBe(rows[0].texts);
  } finally {
    await db.end();
  }
});

describe('without a usable model', () => {
  let lexical: System;
  let folder: string;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'kn-model-'));
    mkdirSync(join(folder, 'corrupt'));
    writeFileSync(join(folder, 'corrupt', 'manifest.json'), '{ not json');
    lexical = await startSystem({ EMBEDDING_MODEL_PATH: join(folder, 'corrupt'), EMBEDDING_MODEL_RETRY_MS: '200' });
  });
  afterAll(async () => {
    await lexical?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  test('search is lexical, the index view says why, and the model is picked up once it is there', async () => {
    const user = (await lexical.createUser()).token;
    const q = await newQuestion(lexical, user, questions.lager);
    await lexical.embeddingsCaughtUp();
    const view = await lexical.api.get(`${API}/search/index`).set(...bearer(lexical.adminToken));
    expect(view.body.embeddings).toEqual({
      model: null,
      state: 'unavailable',
      reason: expect.stringContaining('manifest.json is missing or invalid'),
      embedded: 0,
      questions: 0,
    });
    const found = await lexical.api
      .get(`${API}/questions`)
      .query({ query: 'lager condition' })
      .set(...bearer(user));
    expect(found.body.items.map((i: { id: number }) => i.id)).toEqual([q.id]);
    const reworded = await lexical.api
      .get(`${API}/search/questions-similar`)
      .query({ query: 'How many weeks must it rest chilled before pouring?' })
      .set(...bearer(user));
    expect([reworded.status, reworded.body.items]).toEqual([200, []]);

    // The set-up's model appears where the setting points: picked up without a restart.
    rmSync(join(folder, 'corrupt'), { recursive: true });
    symlinkSync(defaultModelPath(), join(folder, 'corrupt'));
    await waitFor(async () => lexical.services.search.embeddings.status().model !== null, { what: 'the model picked up' });
    await lexical.embeddingsCaughtUp();
    expect(lexical.services.search.embeddings.status()).toEqual(expect.objectContaining({ state: 'ready', embedded: 1, questions: 1 }));
    const found2 = await lexical.api
      .get(`${API}/search/questions-similar`)
      .query({ query: 'How many weeks must it rest chilled before pouring?' })
      .set(...bearer(user));
    expect(found2.body.items.map((i: { id: number }) => i.id)).toEqual([q.id]);
  });
});
