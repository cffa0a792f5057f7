// What meaning costs question search through the whole system (issue 49's cost target: at 100,000
// questions query p99 at most 10 ms and search memory at most 150 MiB above the lexical service's):
// QUESTIONS questions (100,000 by default; QUESTIONS=10000 for a quick run) seeded as bench:search
// seeds them, GET /questions?query= with 1-, 2- and 4-word queries at 16 connections through the
// gateway, the search service restarted in alternating rounds lexical (EMBEDDING_MODEL_PATH=/nonexistent)
// and with the set-up's model (infra/ensure-model.sh): p50/p99 a query size and the search process's
// resident memory for each. Every query text is new to the process, so each one runs the encoder;
// a row of repeated texts shows the LRU's case, and one at a single connection the encoder's latency
// without a queue (the model runs one batch at a time). The search process's CPU is split
// into its main thread and the rest (the encoder's threads): the load of other jobs on the machine
// shows in latencies, less in a process's own CPU.
//
// Embedding 100,000 questions takes 43 minutes, so their vectors are written straight into
// search.question_embeddings, under the hash the service computes of the text it keeps: its
// embedding job finds nothing to do. They are not random: each is the model's vector of the
// question's title (the seed repeats about a thousand titles) plus noise, so that cosines with
// real query vectors spread as real ones do and the neighbours found by meaning alone are real
// results to fetch.
//
// Then the backfill: BACKFILL questions' vectors are deleted and the search service restarted with
// the model, so its embedding job embeds them again: texts a second and search CPU a text while
// 2-word queries run at 16 connections (and their p99, beside the lexical p99 above), then alone.
// Run: pnpm bench:semantic-system (ROUNDS=3, BENCH_SECONDS=10, BACKFILL=6000; 0: none)
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { connectBus } from '@kn/bus';
import { defaultModelPath, openEmbedder, quantize } from '@kn/embedding';
import { indexStatus } from '@kn/search';
import { tokenize } from '@kn/similarity';
import { createLogger } from '@kn/telemetry';
import type autocannon from 'autocannon';
import pg from 'pg';
import { embeddingText, sourceHash } from '../services/search/src/semantic/embeddings.ts';
import { seedContent, seedUsers, writeImportEvents } from './content-seed.ts';
import { bearer, benchSpace, load, login, referenceText, report, startProcess, stopProcess } from './lib.ts';

const QUESTIONS = Number(process.env.QUESTIONS ?? 100_000);
const USERS = Number(process.env.USERS ?? 10_000);
const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BACKFILL = Math.min(QUESTIONS, Number(process.env.BACKFILL ?? 6000));
const MODEL_PATH = process.env.EMBEDDING_MODEL_PATH || defaultModelPath();
const MODEL: string = JSON.parse(readFileSync(`${MODEL_PATH}/manifest.json`, 'utf8')).model;
/** The query-vector cache's size (semantic/embeddings.ts): a text comes back only after more others than this. */
const CACHED_QUERIES = 256;

const space = await benchSpace();
const { id, databaseUrl } = space;
const dir = `/tmp/kn-bench-semantic-system-${id}`;
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
const env = {
  DATABASE_URL: databaseUrl,
  NATS_NAMESPACE: space.namespace,
  LOG_LEVEL: 'info',
  ADMIN_PASSWORD: 'bench-admin-password',
  PORT: '18093',
  HOST: '127.0.0.1',
  SEARCH_INDEX_PATH: `${dir}/index.sqlite`,
  // No expert model fit in the middle of a load (bench:search says why).
  EXPERT_MODEL_CHECK_MS: '2147483647',
};
type Mode = 'lexical' | 'model';
const searchEnv = (mode: Mode) => ({ ...env, EMBEDDING_MODEL_PATH: mode === 'lexical' ? '/nonexistent' : MODEL_PATH });

const users = await startProcess('services/users/src/main.ts', env, 'users service ready');
const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
// Lexical first: no embedding job may start before the vectors are written.
let search = await startProcess('services/search/src/main.ts', searchEnv('lexical'), 'search service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const bus = await connectBus({
  url: 'nats://127.0.0.1:4222',
  namespace: env.NATS_NAMESPACE,
  name: 'bench',
  logger: createLogger('bench', 'warn'),
});
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Math.round(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`))![1]) / 1024);
/** CPU ms so far of a process's main thread and of its other threads (the encoder's worker and ONNX threads, GC helpers, libuv). */
function threadCpu(pid: number) {
  const cpu = { main: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`))
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      cpu[Number(tid) === pid ? 'main' : 'others'] += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The thread ended between the listing and the read.
    }
  return cpu;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);

let seed = 49;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

/** Writes every question's vector as the embedding job would have, under the hash of the text the service keeps. */
async function writeVectors() {
  // The service's own text consumer fills question_texts from the import events.
  while ((await count('select count(*) n from search.question_texts')) < QUESTIONS) await sleep(500);
  const questions = (
    await db.query<{ id: number; title: string; description_text: string }>(
      'select id, title, description_text from content.questions order by id',
    )
  ).rows;
  // Seeded titles are a dump title and ` (n)`, cut at 100 characters: one vector a dump title.
  const baseTitle = (title: string) => title.replace(/\s*\(\d*\)?$/, '').trim();
  const bases = [...new Set(questions.map((q) => baseTitle(q.title)))];
  let started = Date.now();
  const embedder = await openEmbedder({ path: MODEL_PATH });
  const made = await embedder.embed(bases, 'passage');
  await embedder.close();
  const vectorOf = new Map(bases.map((b, i) => [b, made[i]!]));
  console.log(`embedded ${bases.length} distinct titles in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  started = Date.now();
  const PAGE = 5000;
  for (let from = 0; from < questions.length; from += PAGE) {
    const page = questions.slice(from, from + PAGE);
    const rows = page.map((q) => {
      // Noise of about 0.6 of the title's length: a question's cosine with its bare title about 0.85.
      const v = Float32Array.from(vectorOf.get(baseTitle(q.title))!, (x) => x + (0.6 / Math.sqrt(384)) * gaussian());
      const norm = Math.hypot(...v);
      const { values, scale } = quantize(v.map((x) => x / norm));
      return {
        id: q.id,
        hash: sourceHash(embeddingText(q.title, q.description_text)),
        scale,
        hex: Buffer.from(values.buffer).toString('hex'),
      };
    });
    await db.query(
      `insert into search.question_embeddings (model, question_id, source_hash, scale, vector)
       select $1, id, hash, scale, decode(hex, 'hex') from unnest($2::int[], $3::text[], $4::real[], $5::text[]) as r(id, hash, scale, hex)`,
      [MODEL, rows.map((r) => r.id), rows.map((r) => r.hash), rows.map((r) => r.scale), rows.map((r) => r.hex)],
    );
  }
  // What the embedding job would take up (its own query): nothing, or the benchmark would time 43 minutes of backfill.
  const waiting = await count(`select count(*) n from search.question_texts t
    left join search.question_embeddings e on e.question_id = t.question_id and e.model = '${MODEL}'
    where e.question_id is null or e.source_hash <> t.source_hash`);
  if (waiting) throw new Error(`${waiting} questions' texts do not match the vectors written: the service would embed them`);
  console.log(`wrote ${questions.length} vectors in ${((Date.now() - started) / 1000).toFixed(1)} s; none waits for the embedding job`);
}

/** Fingerprint of the stored vectors: it changes if the service embeds anything during the run. */
const vectorsWritten = () =>
  db.query('select count(*) n, max(seq) seq from search.question_embeddings').then((r) => JSON.stringify(r.rows[0]));

const base = 'http://127.0.0.1:18093';
let admin: Awaited<ReturnType<typeof login>>;

/**
 * Waits until the search process answers with every question indexed, its topic vectors trained and
 * (with the model) `vectors` vectors loaded: every question's, or those a backfill finds there.
 */
async function ready(mode: Mode, vectors = QUESTIONS) {
  const started = Date.now();
  for (;;) {
    const s = await indexStatus(bus).catch(() => null);
    const loaded =
      mode === 'lexical'
        ? s?.embeddings.state === 'unavailable'
        : s?.embeddings.model === MODEL && s.embeddings.embedded >= vectors && (vectors < QUESTIONS || s.embeddings.state === 'ready');
    if (s?.ready && s.questions >= QUESTIONS && !s.topics?.training && loaded) {
      // The same through the gateway, as an operator reads it.
      const seen = await admin.call('indexStatus', {});
      if (mode === 'model' && (seen.embeddings.model !== MODEL || seen.embeddings.embedded < vectors))
        throw new Error(`the gateway's search status: ${JSON.stringify(seen.embeddings)}`);
      return (Date.now() - started) / 1000;
    }
    if (Date.now() - started > 600_000) throw new Error(`search not ready after 10 minutes: ${JSON.stringify(s)}`);
    await sleep(200);
  }
}

/** The embedding job at work: BACKFILL vectors deleted, the model's search restarted, texts embedded a second with and without queries. */
async function backfill(fresh: (n: number) => autocannon.Request[], headers: { authorization: string }, lexicalP99: number) {
  await stopProcess(search);
  await db.query(
    'delete from search.question_embeddings where question_id in (select question_id from search.question_embeddings order by question_id desc limit $1)',
    [BACKFILL],
  );
  const embedded = () => count('select count(*) n from search.question_embeddings');
  const from = await embedded();
  search = await startProcess('services/search/src/main.ts', searchEnv('model'), 'search service ready');
  // Measured once the service is warm (its index loaded, its topics trained, the vectors there
  // loaded): what a backfill costs, not what a start does.
  await ready('model', QUESTIONS - BACKFILL);
  while ((await embedded()) === from) await sleep(200);
  const window = async (queries: boolean) => {
    const [n0, t0, cpu0] = [await embedded(), performance.now(), threadCpu(search.pid!)];
    const r = queries
      ? await load({
          url: base,
          connections: CONNECTIONS,
          seconds: SECONDS,
          headers,
          requests: fresh(2),
          processes: { search: search.pid! },
        })
      : await sleep(SECONDS * 1000).then(() => null);
    const [n1, t1, cpu1] = [await embedded(), performance.now(), threadCpu(search.pid!)];
    const texts = n1 - n0;
    const cpu = cpu1.main + cpu1.others - cpu0.main - cpu0.others;
    const left = from + BACKFILL - n1;
    console.log(
      `backfill ${queries ? 'under 2-word queries at 16 connections' : 'alone'}: ${texts} texts in ${((t1 - t0) / 1000).toFixed(1)} s = ${((1000 * texts) / (t1 - t0)).toFixed(1)} texts/s, search CPU ${(cpu / Math.max(1, texts)).toFixed(1)} ms a text (${((1000 * texts) / Math.max(1, cpu)).toFixed(1)} texts a CPU second)${r ? `; queries p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms (${(r.p99_ms / lexicalP99).toFixed(2)}× the lexical 2-word p99), ${r.requests_per_second}/s, ${r.errors + r.non_2xx} failed` : ''}${left <= 0 ? ' (the backfill ended within the window: the rate is a floor)' : ''}`,
    );
  };
  await window(true);
  await window(false);
}

try {
  let started = Date.now();
  await seedUsers(databaseUrl, USERS);
  await seedContent(databaseUrl, { questions: QUESTIONS, users: USERS });
  await writeImportEvents(databaseUrl);
  console.log(`seeded ${USERS} users, ${QUESTIONS} questions and their import events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await writeVectors();
  const written = await vectorsWritten();
  admin = await login(`${base}/api/v1`);
  console.log(`lexical search ready after the catch-up in ${(await ready('lexical')).toFixed(1)} s`);
  const headers = bearer(admin);

  // Query words: content words of the seeded titles, as bench:search picks them, in a shuffled cycle
  // so that a one-word text returns only after all the others (more than the cache holds).
  const titles = (await db.query<{ title: string }>('select title from content.questions order by random() limit 2000')).rows;
  const words = [...new Set(titles.flatMap((t) => tokenize(t.title, { stem: false })).filter((w) => w.length >= 4 && !/\d/.test(w)))];
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [words[i], words[j]] = [words[j]!, words[i]!];
  }
  if (words.length < 2 * CACHED_QUERIES) throw new Error(`only ${words.length} query words: one-word texts would come back from the cache`);
  let next = 0;
  /** A text of n words: one word not asked within the last words.length texts, more words at random (the combination is new). */
  const freshText = (n: number) =>
    n === 1 ? words[next++ % words.length]! : Array.from({ length: n }, () => words[Math.floor(random() * words.length)]!).join(' ');
  const asked = new Set<string>();
  const fresh = (n: number): autocannon.Request[] => [
    {
      method: 'GET',
      setupRequest: (req) => {
        let text = freshText(n);
        // Beyond one word a repeat is unlikely, but never measured as fresh.
        for (let tries = 0; n > 1 && asked.has(text) && tries < 10; tries++) text = freshText(n);
        asked.add(text);
        return { ...req, path: `/api/v1/questions?query=${encodeURIComponent(text)}` };
      },
    },
  ];
  const cachedTexts = Array.from({ length: 100 }, () => freshText(2));
  let cachedNext = 0;
  const cached: autocannon.Request[] = [
    {
      method: 'GET',
      setupRequest: (req) => ({
        ...req,
        path: `/api/v1/questions?query=${encodeURIComponent(cachedTexts[cachedNext++ % cachedTexts.length]!)}`,
      }),
    },
  ];

  // How often a load reaches the neighbours found by meaning alone (fewer than 10 text matches).
  const fewMatches: string[] = [];
  for (const n of [1, 2, 4]) {
    let few = 0;
    for (let i = 0; i < 100; i++) {
      const page = await admin.call('listQuestions', { query: { query: freshText(n) } });
      if (page.total < 10) few++;
    }
    fewMatches.push(`${n} word${n > 1 ? 's' : ''} ${few}%`);
  }
  console.log(`queries with fewer than 10 text matches (lexical, 100 each): ${fewMatches.join(', ')}`);

  // One connection beside the 16: the encoder's own latency, without the queue before it.
  const loads: Array<[label: string, requests: () => autocannon.Request[], connections: number]> = [
    ['1 word', () => fresh(1), CONNECTIONS],
    ['2 words', () => fresh(2), CONNECTIONS],
    ['4 words', () => fresh(4), CONNECTIONS],
    ['2 words, repeated (cached)', () => cached, CONNECTIONS],
    ['2 words, 1 connection', () => fresh(2), 1],
  ];
  type Figures = {
    p50: number[];
    p99: number[];
    rps: number[];
    searchCpu: number[];
    mainShare: number[];
    machineCpu: number[];
    failed: number;
  };
  const results = new Map<string, Figures>();
  const memory: Record<Mode, { rss: number[]; peak: number[]; start: number[] }> = {
    lexical: { rss: [], peak: [], start: [] },
    model: { rss: [], peak: [], start: [] },
  };
  let mode: Mode = 'lexical';
  for (let round = 1; round <= ROUNDS; round++) {
    // lexical, model | model, lexical | …: each configuration goes first as often as the other.
    const order: Mode[] = round % 2 ? ['lexical', 'model'] : ['model', 'lexical'];
    for (const wanted of order) {
      if (wanted !== mode) {
        await stopProcess(search);
        started = Date.now();
        search = await startProcess('services/search/src/main.ts', searchEnv(wanted), 'search service ready');
        mode = wanted;
        const waited = await ready(mode);
        console.log(
          `round ${round}: ${mode} search started in ${((Date.now() - started) / 1000 - waited).toFixed(1)} s, ready ${waited.toFixed(1)} s later`,
        );
      }
      memory[mode].start.push(mib(search.pid!, 'VmRSS'));
      await load({ url: base, connections: CONNECTIONS, seconds: 2, headers, requests: fresh(2) });
      for (const [label, requests, connections] of loads) {
        const before = threadCpu(search.pid!);
        const r = await load({
          url: base,
          connections,
          seconds: SECONDS,
          headers,
          requests: requests(),
          processes: { search: search.pid! },
        });
        const after = threadCpu(search.pid!);
        const main = after.main - before.main;
        const share = main / Math.max(1, main + after.others - before.others);
        // Whatever the previous load left in flight is done before the next one starts.
        await sleep(1000);
        const key = `${mode}\t${label}`;
        const f = results.get(key) ?? { p50: [], p99: [], rps: [], searchCpu: [], mainShare: [], machineCpu: [], failed: 0 };
        f.p50.push(r.p50_ms);
        f.p99.push(r.p99_ms);
        f.rps.push(r.requests_per_second);
        f.searchCpu.push(Number(r.cpu_ms_per_request?.match(/search ([\d.]+)/)?.[1]));
        f.mainShare.push(Math.round(100 * share));
        f.machineCpu.push(Number(r.cpu_ms_per_request?.match(/machine ([\d.]+)/)?.[1]));
        f.failed += r.errors + r.non_2xx;
        results.set(key, f);
        console.log(
          `round ${round} ${mode} ${label}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.requests_per_second}/s; CPU ms a request: ${r.cpu_ms_per_request}; longest pause ${r.longest_pause}; main thread ${Math.round(100 * share)}% of search CPU`,
        );
      }
      memory[mode].rss.push(mib(search.pid!, 'VmRSS'));
      memory[mode].peak.push(mib(search.pid!, 'VmHWM'));
    }
  }
  if ((await vectorsWritten()) !== written)
    throw new Error('the service wrote embeddings during the run: the vectors written were not taken as current');

  const rows = [...results].map(([key, f]) => {
    const [config, query] = key.split('\t');
    return {
      config,
      query,
      p50_ms: median(f.p50),
      p99_ms: median(f.p99),
      'p99 by round': f.p99.join(' / '),
      'req/s': median(f.rps),
      'search CPU ms/req': median(f.searchCpu),
      'of it main thread %': median(f.mainShare),
      'machine CPU ms/req': median(f.machineCpu),
      failed: f.failed,
    };
  });
  rows.sort(
    (a, b) => loads.findIndex(([l]) => l === a.query) - loads.findIndex(([l]) => l === b.query) || a.config!.localeCompare(b.config!),
  );
  for (const m of ['lexical', 'model'] as const)
    rows.push({
      config: m,
      query: 'search RSS MiB: after the loads (peak; at ready)',
      p50_ms: Number.NaN,
      p99_ms: Number.NaN,
      'p99 by round': `${memory[m].rss.join(' / ')} (${memory[m].peak.join(' / ')}; ${memory[m].start.join(' / ')})`,
      'req/s': Number.NaN,
      'search CPU ms/req': Number.NaN,
      'of it main thread %': Number.NaN,
      'machine CPU ms/req': Number.NaN,
      failed: 0,
    });
  report(
    `Question search lexical versus with ${MODEL}, ${QUESTIONS} questions, ${USERS} users, ${CONNECTIONS} connections, ${SECONDS} s a load, ${ROUNDS} alternating rounds (medians over rounds; query texts new to the process but for the cached row)`,
    `QUESTIONS=${QUESTIONS} ROUNDS=${ROUNDS} pnpm bench:semantic-system`,
    rows,
  );
  // ROUNDS=0: the backfill alone (its query p99 then compares with nothing).
  const p99 = (config: Mode, query: string) => rows.find((r) => r.config === config && r.query === query)?.p99_ms ?? Number.NaN;
  const extra = ['1 word', '2 words', '4 words'].map((q) => p99('model', q) - p99('lexical', q));
  const rssExtra = median(memory.model.rss) - median(memory.lexical.rss);
  const peakExtra = median(memory.model.peak) - median(memory.lexical.peak);
  if (BACKFILL) await backfill(fresh, headers, p99('lexical', '2 words'));
  console.log(`neighbours by meaning alone reachable (fewer than 10 text matches): ${fewMatches.join(', ')}`);
  console.log(
    `headline: ${QUESTIONS} questions: the model adds ${extra.join(' / ')} ms to query p99 (1/2/4 words; target ≤ 10: ${extra.every((e) => e <= 10) ? 'met' : 'missed'}), ${rssExtra} MiB to search RSS after the loads (peak ${peakExtra > 0 ? '+' : ''}${peakExtra} MiB; target ≤ 150: ${rssExtra <= 150 && peakExtra <= 150 ? 'met' : 'missed'}); ${referenceText()}`,
  );
} finally {
  await stopProcess(gateway);
  await stopProcess(search);
  await stopProcess(content);
  await stopProcess(users);
  await db.end();
  await bus.close();
  await space.drop();
}
