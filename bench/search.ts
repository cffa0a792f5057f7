// Question search and expert search on a large network (100,000 questions, 300,000 solutions,
// 10,000 users by default; QUESTIONS=10000 for a quick run): index catch-up from the event
// stream, a full rebuild, GET /questions?query= with one-, two- and four-word queries and
// POST /search/experts with a question's text, at 16 connections, through the gateway, content,
// search and users services as separate processes; then the expert model's fit on the whole
// network (timed), and expert search again while fits run one after the other in the background
// (FIT=0 leaves the fits out). ENGINE=opensearch runs the search service on a one-node OpenSearch
// (infra/search-cluster.sh, its JVM's CPU and memory counted with the service's); ENGINE=both runs
// the local engine and then OpenSearch, one after the other, and prints both headlines. REBUILD=0
// leaves the full rebuild out (the loads then run on the index as the catch-up left it). EDITED=1
// edits a question before the loads: the engine then holds its old copy as a deleted document until
// a later merge, as a live network's index does (OpenSearch counts words by aggregation then). Search is
// lexical unless MEANING=1. The headline also shows what meaning would add to a query: the set-up's
// sentence encoder run in this process on query texts made as the loads make them (bench/encoder.ts:
// CPU a fresh query, and the memory the model takes), so that a change that slows meaning is seen.
// On OpenSearch a last load asks the engine itself for a plain BM25 multi_match over the same word
// fields (the engine's floor), and a line gives the search service's and the engine's CPU a request.
// Run: pnpm bench:search
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connectBus } from '@kn/bus';
import { SEARCH_REBUILD_SUBJECT } from '@kn/contracts';
import { indexStatus } from '@kn/search';
import { tokenize } from '@kn/similarity';
import { createLogger } from '@kn/telemetry';
import type autocannon from 'autocannon';
import pg from 'pg';
import { seedContent, seedUsers, writeImportEvents } from './content-seed.ts';
import { queryCost, withEncoder } from './encoder.ts';
import {
  bearer,
  benchSpace,
  cpuMeter,
  load,
  login,
  profileWindow,
  referenceText,
  report,
  serviceEnv,
  startProcess,
  stopProcess,
} from './lib.ts';

const ENGINE = process.env.ENGINE ?? 'local';
if (!['local', 'opensearch', 'both'].includes(ENGINE)) throw new Error(`ENGINE is local, opensearch or both, not ${ENGINE}`);
if (ENGINE === 'both') {
  const headlines = ['local', 'opensearch'].map((engine) => {
    const run = spawnSync(process.execPath, [process.argv[1]!], {
      env: { ...process.env, ENGINE: engine },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const out = run.stdout.toString();
    process.stdout.write(out);
    if (run.status !== 0) throw new Error(`the ${engine} run failed (exit ${run.status})`);
    return `${engine}: ${out.match(/^headline: (.*)$/m)?.[1] ?? '?'}`;
  });
  console.log(`\nside by side (ENGINE=both pnpm bench:search):\n${headlines.join('\n')}`);
  process.exit(0);
}
const QUESTIONS = Number(process.env.QUESTIONS ?? 100_000);
const USERS = Number(process.env.USERS ?? 10_000);
const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** FIT=0: no expert model fits (at a million questions a fit holds its own copy of the history). */
const FIT = process.env.FIT !== '0';
const REBUILD = process.env.REBUILD !== '0';
const EDITED = process.env.EDITED === '1';
/** The gateway's port and the engine's (BENCH_PORT, BENCH_CLUSTER_HTTP_PORT, BENCH_CLUSTER_TRANSPORT_PORT): runs side by side take others. */
const PORT = Number(process.env.BENCH_PORT ?? 18092);
const space = await benchSpace();
const { id, databaseUrl } = space;
const indexPath = `/tmp/kn-bench-search-${id}/index.sqlite`;
// The index file goes with the benchmark, however it ends (KEEP_INDEX=1 keeps it).
process.once('exit', () => {
  if (!process.env.KEEP_INDEX) rmSync(`/tmp/kn-bench-search-${id}`, { recursive: true, force: true });
});
const env = {
  ...serviceEnv({ databaseUrl, namespace: space.namespace }, PORT),
  SEARCH_INDEX_PATH: indexPath,
  // The benchmark says when the expert model is fitted (below), not the service's own schedule: an
  // hourly check fitted a million questions' model in the middle of a run that took longer (about
  // 4 GiB more, and the machine's other core). The longest period a timer takes (2^31 − 1 ms).
  EXPERT_MODEL_CHECK_MS: '2147483647',
  // Words only unless MEANING=1: the encoder's backfill of every question would share the loads'
  // CPU (what meaning costs is bench:semantic-system's subject).
  ...(process.env.MEANING === '1' ? {} : { EMBEDDING_MODEL_PATH: '/nonexistent' }),
};

// OpenSearch on ports and in a folder of the benchmark's own, stopped however it ends.
const clusterEnv = {
  ...process.env,
  SEARCH_CLUSTER_DIR: `/tmp/kn-bench-search-cluster-${id}`,
  SEARCH_CLUSTER_HTTP_PORT: process.env.BENCH_CLUSTER_HTTP_PORT ?? '9280',
  SEARCH_CLUSTER_TRANSPORT_PORT: process.env.BENCH_CLUSTER_TRANSPORT_PORT ?? '9380',
};
const cluster = (...args: string[]) =>
  execFileSync('bash', ['infra/search-cluster.sh', ...args], { env: clusterEnv, encoding: 'utf8' }).trim();
let enginePid: number | undefined;
let engineUrl: string | undefined;
if (ENGINE === 'opensearch') {
  const url = cluster('start', '1');
  // KEEP_INDEX=1 keeps the engine running too (stop it with infra/search-cluster.sh and its folder and ports).
  process.once('exit', () =>
    process.env.KEEP_INDEX ? console.log(`engine kept at ${url} (${clusterEnv.SEARCH_CLUSTER_DIR})`) : cluster('stop'),
  );
  enginePid = Number(readFileSync(`${clusterEnv.SEARCH_CLUSTER_DIR}/node-1.pid`, 'utf8'));
  engineUrl = url;
  Object.assign(env, { ELASTICSEARCH_URL: url, ELASTICSEARCH_INDEX_PREFIX: `kn-bench-${id}` });
}
const users = await startProcess('services/users/src/main.ts', env, 'users service ready');
const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
const search = await startProcess('services/search/src/main.ts', { ...env, LOG_LEVEL: 'info' }, 'search service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const bus = await connectBus({
  url: 'nats://127.0.0.1:4222',
  namespace: env.NATS_NAMESPACE,
  name: 'bench',
  logger: createLogger('bench', 'warn'),
});
async function waitForIndex(questions: number) {
  for (;;) {
    const s = await indexStatus(bus).catch(() => null);
    if (s?.ready && s.questions >= questions) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
/**
 * Seconds until the engine has merged the index after a catch-up or rebuild (the feed starts the
 * merge once it has been quiet for 5 s: elasticsearch/feed.ts), so that the loads measure the
 * index as it then stands, not the merge; 0 on the local engine.
 */
async function waitForMerge() {
  if (!engineUrl) return 0;
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 7_000));
  for (;;) {
    const tasks = (await (await fetch(`${engineUrl}/_tasks?actions=indices:admin/forcemerge*`)).json()) as {
      nodes?: Record<string, { tasks?: Record<string, unknown> }>;
    };
    if (!Object.values(tasks.nodes ?? {}).some((n) => Object.keys(n.tasks ?? {}).length)) return (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 500));
  }
}
/** Seconds until the topic vectors are trained (after a catch-up: they are trained then). */
async function waitForTopics() {
  const started = Date.now();
  for (;;) {
    const s = await indexStatus(bus).catch(() => null);
    if (s?.ready && !s.topics?.training) return (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 200));
  }
}
/** The search process's resident memory (with OpenSearch's JVM's beside it): its peak (VmHWM) or now (VmRSS). */
const rssOf = (field: 'VmHWM' | 'VmRSS') => {
  const mib = (pid: number) => {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`));
    return line ? Math.round(Number(line[1]) / 1024) : Number.NaN;
  };
  return enginePid ? `${mib(search.pid!)} MiB + OpenSearch ${mib(enginePid)} MiB` : `${mib(search.pid!)} MiB`;
};
const peakRss = () => rssOf('VmHWM');
const processes = {
  gateway: gateway.pid!,
  content: content.pid!,
  search: search.pid!,
  users: users.pid!,
  ...(enginePid ? { opensearch: enginePid } : {}),
};
/** What a phase cost each process, in CPU seconds: where a catch-up or a rebuild is bound. */
const cpuSeconds = (cpu: ReturnType<typeof cpuMeter>) =>
  `CPU s: ${cpu()
    .map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)}`)
    .join(', ')}`;

try {
  let started = Date.now();
  await seedUsers(databaseUrl, USERS);
  await seedContent(databaseUrl, { questions: QUESTIONS, users: USERS });
  console.log(
    `seeded ${USERS} users, ${QUESTIONS} questions, ${QUESTIONS * 3} solutions in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  started = Date.now();
  await writeImportEvents(databaseUrl);
  console.log(`wrote ${QUESTIONS} import events to the outbox in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  started = Date.now();
  let cpu = cpuMeter(processes);
  let window = profileWindow('catch-up');
  await waitForIndex(QUESTIONS);
  window.end();
  const catchUp = (Date.now() - started) / 1000;
  const catchUpCpu = cpuSeconds(cpu);
  const topicsAfterCatchUp = await waitForTopics();
  // The rebuild starts on a quiet engine: the feed's merge of the caught-up index (5 s after its
  // last write) ran into the rebuild's time, or not, by how long the topic vectors took.
  const mergedAfterCatchUp = await waitForMerge();
  started = Date.now();
  cpu = cpuMeter(processes);
  window = profileWindow('rebuild');
  if (REBUILD) {
    bus.nc.publish(bus.subject(SEARCH_REBUILD_SUBJECT), '{}');
    await new Promise((r) => setTimeout(r, 500));
    await waitForIndex(QUESTIONS);
  }
  window.end();
  const rebuild = (Date.now() - started) / 1000;
  const rebuildCpu = cpuSeconds(cpu);
  const topicsAfterRebuild = await waitForTopics();
  const merged = await waitForMerge();
  const afterRebuild = rssOf('VmRSS');
  console.log(
    `catch-up (relay publishing + indexing): ${catchUp.toFixed(1)} s, ${Math.round(QUESTIONS / catchUp)} events/s; topic vectors trained ${topicsAfterCatchUp.toFixed(1)} s after it${engineUrl ? `, merged ${mergedAfterCatchUp.toFixed(1)} s after them` : ''}; ${catchUpCpu}`,
  );
  console.log(
    REBUILD
      ? `full rebuild from the stream: ${rebuild.toFixed(1)} s, ${Math.round(QUESTIONS / rebuild)} events/s, topic vectors ${topicsAfterRebuild.toFixed(1)} s after it; search RSS peak ${peakRss()}, ${afterRebuild} after it; ${rebuildCpu}`
      : `full rebuild left out (REBUILD=0); search RSS peak ${peakRss()}, ${afterRebuild} now`,
  );
  if (engineUrl) console.log(`the engine's merge after it: done ${merged.toFixed(1)} s later`);

  // Query words: content words of the seeded titles, as users would type them.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const titles = (
    await client.query<{ title: string; description_text: string }>(
      'select title, description_text from content.questions order by random() limit 2000',
    )
  ).rows;
  await client.end();
  const words = [...new Set(titles.flatMap((t) => tokenize(t.title, { stem: false })).filter((w) => w.length >= 4 && !/\d/.test(w)))];
  const pick = () => words[Math.floor(Math.random() * words.length)]!;
  const queries = (n: number): autocannon.Request[] => [
    {
      method: 'GET',
      setupRequest: (req) => ({
        ...req,
        path: `/api/v1/questions?query=${encodeURIComponent(Array.from({ length: n }, pick).join(' '))}`,
      }),
    },
  ];
  const base = `http://127.0.0.1:${PORT}`;
  const admin = await login(`${base}/api/v1`);
  const headers = bearer(admin);
  const sample = await admin.send('listQuestions', { query: { query: pick() } });
  console.log(`sample query: ${sample.status}, total ${sample.ok ? sample.data.total : sample.error.message}`);
  if (EDITED && sample.ok && sample.data.items.length) {
    const { id: edited, title } = sample.data.items[0]!;
    await admin.call('updateQuestion', { params: { id: edited }, body: { title: `${title.slice(0, 80)} zyxedited` } });
    // Searchable once the feed has written it (its old copy deleted).
    while (!(await admin.call('listQuestions', { query: { query: 'zyxedited' } })).total) await new Promise((r) => setTimeout(r, 100));
    console.log(`question ${edited} edited: the index holds a deleted document`);
  }
  await load({ url: base, connections: CONNECTIONS, seconds: 2, headers, requests: queries(1) });
  // Expert search asked with a question's title and description, as publishing asks it.
  const expertQueries: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/api/v1/search/experts',
      headers: { ...headers, 'content-type': 'application/json' },
      setupRequest: (req) => {
        const t = titles[Math.floor(Math.random() * titles.length)]!;
        return { ...req, body: JSON.stringify({ query: `${t.title}\n${t.description_text}`.slice(0, 1000) }) };
      },
    },
  ];
  // Asked as the load asks (title and description): a bare title of this synthetic network names no tag.
  const experts = await admin.call('findExperts', {
    body: { query: `${titles[0]!.title}\n${titles[0]!.description_text}`.slice(0, 1000) },
  });
  console.log(`sample expert search: ${experts.tags.length} tags, ${experts.experts.length} experts`);
  // The expert model first, timed.
  const fitModel = async () => {
    const at = Date.now();
    const model = await admin.call('fitExpertModel', {});
    return { seconds: (Date.now() - at) / 1000, model };
  };
  if (FIT) {
    const first = await fitModel();
    console.log(
      `expert model fit: ${first.seconds.toFixed(1)} s, ${first.model.status} on ${first.model.questions} answered questions, validation ${JSON.stringify(first.model.validation)}`,
    );
  }
  const rows: Array<{ request: string; p99_ms: number; cpu_ms_per_request?: string }> = [];
  /** One load of the table: its row, and its window in the profiles with PROFILE_DIR. */
  const measure = async (request: string, label: string, requests: autocannon.Request[], connections = CONNECTIONS) => ({
    request,
    ...(await load({ url: base, connections, seconds: SECONDS, headers, requests, processes, label })),
  });
  for (const n of [1, 2, 4]) rows.push(await measure(`GET /questions?query= (${n} word${n > 1 ? 's' : ''})`, `query ${n}`, queries(n)));
  // The question list beside them, as bench:content asks it (32 connections): at a million questions it has a target here.
  rows.push(await measure('GET /questions (list, 32 connections)', 'list', [{ method: 'GET', path: '/api/v1/questions?limit=10' }], 32));
  rows.push(await measure('POST /search/experts (a question)', 'experts', expertQueries));
  if (FIT) {
    let loading = true;
    const fitting = (async () => {
      const seconds: number[] = [];
      while (loading) seconds.push((await fitModel()).seconds);
      return seconds;
    })();
    rows.push(await measure('POST /search/experts while fits run', 'experts while fits run', expertQueries));
    loading = false;
    const during = await fitting;
    console.log(`fits during that load: ${during.map((s) => `${s.toFixed(1)} s`).join(', ')}`);
  }
  if (engineUrl) {
    // The engine's own floor: a plain BM25 multi_match over the same word fields of the same index,
    // asked of the engine directly (its top 10), the 2-word queries of the load above.
    const fields = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'].map((f) => `words.${f}`);
    const floor: autocannon.Request[] = [
      {
        method: 'POST',
        path: `/kn-bench-${id}-questions/_search`,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ _source: false, query: { multi_match: { query: `${pick()} ${pick()}`, fields } } }),
        }),
      },
    ];
    const row = await load({ url: engineUrl, connections: CONNECTIONS, seconds: SECONDS, requests: floor, processes, label: 'floor' });
    rows.push({ request: "floor: the engine's multi_match (2 words)", ...row });
  }
  report(
    `Question and expert search on the ${ENGINE} engine, ${QUESTIONS} questions, ${QUESTIONS * 3} solutions, ${USERS} users, ${CONNECTIONS} connections, ${SECONDS} s each; catch-up ${catchUp.toFixed(1)} s, rebuild ${REBUILD ? `${rebuild.toFixed(1)} s` : 'left out'}`,
    `ENGINE=${ENGINE} pnpm bench:search`,
    rows,
  );
  const machine = (row: (typeof rows)[number]) => row.cpu_ms_per_request?.match(/machine ([\d.]+)/)?.[1] ?? '?';
  const [one, two, four, list, expert] = rows;
  // The search service and its engine alone (the machine's figure counts whatever else runs on it).
  const own = (row: (typeof rows)[number] | undefined) => {
    const ms = (name: string) => Number(row?.cpu_ms_per_request?.match(new RegExp(`${name} ([\\d.]+)`))?.[1] ?? 0);
    return (ms('search') + ms('opensearch')).toFixed(1);
  };
  const floorRow = rows.find((r) => r.request.startsWith('floor'));
  console.log(
    `search + engine CPU per request: queries ${own(one)}/${own(two)}/${own(four)} ms (1/2/4 words), experts ${own(expert)} ms${floorRow ? `; the engine's floor (multi_match, 2 words) ${own(floorRow)} ms` : ''}`,
  );
  // After the loads, so that it takes none of their CPU; 100 fresh texts of each size.
  const meaning =
    (await withEncoder({}, async (embedder, loaded) => {
      const costs = [];
      for (const n of [1, 2, 4]) {
        const texts = new Set<string>();
        while (texts.size < 100) texts.add(Array.from({ length: n }, pick).join(' '));
        costs.push(await queryCost(embedder, [...texts]));
      }
      return `meaning (${embedder.model}, in this process): encoder CPU ${costs.map((c) => c.cpuMs.toFixed(1)).join('/')} ms per fresh query beside those ${machine(one!)}/${machine(two!)}/${machine(four!)}, model +${Math.round(loaded)} MiB (targets: ≤ 3 ms, ≤ 150 MiB)`;
    })) ?? 'meaning: no model set up (bash infra/ensure-model.sh)';
  console.log(`search RSS peak ${peakRss()}${FIT ? ' (the fits included)' : ''}, ${rssOf('VmRSS')} now`);
  console.log(
    `headline: ${QUESTIONS} questions: query p99 ${one!.p99_ms}/${two!.p99_ms}/${four!.p99_ms} ms (1/2/4 words), machine CPU ${machine(one!)}/${machine(two!)}/${machine(four!)} ms per query; experts p99 ${expert!.p99_ms} ms; list p99 ${list!.p99_ms} ms; catch-up ${catchUp.toFixed(0)} s, rebuild ${REBUILD ? `${rebuild.toFixed(0)} s` : 'left out'}, topic vectors ${topicsAfterRebuild.toFixed(0)} s after it; search RSS ${afterRebuild} after the rebuild, ${rssOf('VmRSS')} after the loads (targets at 100,000: query p99 < 60 ms, ≤ 3.5 ms CPU, experts p99 < 100 ms, RSS ≤ 400 MiB; at 1,000,000: catch-up and rebuild < 10 min, query p99 < 100 ms, RSS < 3 GiB, list p99 < 60 ms); ${meaning}; ${referenceText()}`,
  );
} finally {
  await stopProcess(gateway);
  await stopProcess(search);
  await stopProcess(content);
  await stopProcess(users);
  await bus.close();
  await space.drop();
  if (process.env.KEEP_INDEX) console.log(`index kept at ${indexPath}`);
}
