import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as search from '@kn/search';
import { waitFor } from '@kn/testing';
import type { ElasticsearchBackend } from '../services/search/src/elasticsearch/backend.ts';
import { INDEX_VERSION } from '../services/search/src/elasticsearch/mappings.ts';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/**
 * Search past one machine: two search instances on one three-node OpenSearch cluster (its own,
 * started here from infra/search-cluster.sh on ports of its own), a third instance on the local
 * engine as the reference. While questions are written, the node holding the questions' primary
 * shard is killed and later restarted, and the instance that feeds the index restarts mid-feed:
 * the other instance keeps answering (the replicas serve), and in the end the shared index holds
 * what the local engine holds, every event applied once.
 *
 * Not part of the main jest run (three JVMs beside the other files would slow them): infra/test.sh
 * runs it after the search tests on OpenSearch.
 */
const run = promisify(execFile);
const clusterEnv = {
  ...process.env,
  SEARCH_CLUSTER_DIR: join(tmpdir(), 'kn-search-scale-out'),
  SEARCH_CLUSTER_HTTP_PORT: '9270',
  SEARCH_CLUSTER_TRANSPORT_PORT: '9370',
};
const cluster = async (...args: string[]) =>
  (await run('bash', [join(__dirname, '..', 'infra', 'search-cluster.sh'), ...args], { env: clusterEnv, timeout: 240_000 })).stdout.trim();

type SearchService = Awaited<ReturnType<typeof search.start>>;
const engineOf = (s: SearchService) => s.backend as unknown as ElasticsearchBackend;

let urls: string;
let system: System;
let dir: string;
const instances: SearchService[] = [];
const configs: search.SearchConfig[] = [];
/** Started here (the system stops its own). */
const started: SearchService[] = [];
const startSearch = async (config: search.SearchConfig, options: { indexVersion?: number } = {}) => {
  const service = await search.start(config, options);
  started.push(service);
  return service;
};
let local: SearchService;

beforeAll(async () => {
  urls = await cluster('start', '3');
  dir = mkdtempSync(join(tmpdir(), 'kn-scale-out-'));
  system = await startSystem({ ELASTICSEARCH_URL: urls, ELASTICSEARCH_INDEX_PREFIX: 'kn-scale-out' });
  const second = search.loadConfig({ ...system.env, SEARCH_INDEX_PATH: join(dir, 'second.sqlite') });
  instances.push(system.services.search, await startSearch(second));
  configs.push(search.loadConfig(system.env), second);
  local = await startSearch(search.loadConfig({ ...system.env, ELASTICSEARCH_URL: '', SEARCH_INDEX_PATH: join(dir, 'local.sqlite') }));
}, 300_000);

afterAll(async () => {
  for (const s of started) await s.stop().catch(() => {});
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await cluster('stop');
}, 120_000);

const hops = {
  query: 'hops',
  operator: 'OR' as const,
  fields: ['title' as const, 'description' as const, 'tags' as const, 'solutions' as const],
  stop_languages: ['en'],
  filter: { tag_operator: 'OR' as const, include_uncategorized: true, include_deleted: false },
  offset: 0,
  limit: 100,
  highlight: false,
};

/**
 * Every change so far in the index of each running instance (the system's own search service may
 * be one the first test stopped and replaced: system.searchCaughtUp would ask it).
 */
async function caughtUp(...others: SearchService[]) {
  await Promise.all([system.services.content.runtime.relay.flush(), system.services.users.runtime.relay.flush()]);
  await Promise.all([...instances, local, ...others].map((s) => s.backend.caughtUp()));
}

/** The node (1..3) that holds the primary copy of the questions' shard. */
async function primaryNode() {
  const res = await fetch(`${urls.split(',')[0]}/_cat/shards/kn-scale-out-questions?format=json`);
  const shards = (await res.json()) as Array<{ prirep: string; node: string; state: string }>;
  const primary = shards.find((s) => s.prirep === 'p' && s.state === 'STARTED');
  if (!primary) throw new Error(`no started primary: ${JSON.stringify(shards)}`);
  return Number(primary.node.replace('node-', ''));
}

/** Everything the index holds that search, routing and the expert model read, in one comparable value. */
async function content(backend: SearchService['backend']) {
  const history = await backend.history(Date.now() + 86_400_000);
  const questions = history.questions.map((q) => ({
    ...q,
    terms: undefined,
    counts: undefined,
    words: Object.fromEntries([...q.terms].map((t, i) => [history.word(t), [...q.counts.subarray(3 * i, 3 * i + 3)]]).sort()),
  }));
  const ids = questions.map((q) => q.id);
  return {
    questions,
    solutions: [...history.solutions].sort((a, b) => a.id - b.id),
    forwards: [...history.forwards].sort((a, b) => a.question_id - b.question_id || a.recipient_id - b.recipient_id),
    tags: [...history.tags.keys()].sort(),
    deletedUsers: [...history.deletedUsers].sort(),
    routed: await Promise.all(ids.map((id) => backend.question(id))),
    titles: [...(await backend.titles(ids))].sort((a, b) => a[0] - b[0]),
    hops: (await backend.match(hops)).items.map((i) => i.id).sort((a, b) => a - b),
  };
}

test('two instances on a three-node cluster: a node lost and an instance restarted mid-feed lose nothing and apply nothing twice', async () => {
  const asker = await system.createUser();
  const expert = await system.createUser();
  let written = 0;
  const write = async () => {
    const n = written++;
    const { id } = await newQuestion(system, asker.token, {
      title: `Scale-out question ${n}: how many hops for a pale ale?`,
      description: `<p>Batch ${n} of a pale ale, bittering with hops.</p>`,
      tags: ['hops', `batch-${n % 5}`],
    });
    if (n % 3 === 0) await publishedSolution(system, expert.token, id, `<p>Answer ${n}: add the hops late.</p>`);
    if (n % 4 === 0) {
      const res = await system.api
        .put(`${API}/questions/${id}`)
        .set(...bearer(asker.token))
        .send({ title: `Scale-out question ${n}, edited: dry hopping` });
      expect(res.status).toBe(200);
    }
    if (n % 7 === 0) expect((await system.api.delete(`${API}/questions/${id}`).set(...bearer(asker.token))).status).toBe(204);
  };
  const burst = async (count: number) => {
    for (let i = 0; i < count; i++) await write();
  };

  // Searches on the instance that keeps running, all along: each must answer.
  const steady = () => instances.find((s) => !engineOf(s).feed.isHolder) ?? instances[0]!;
  let reading = true;
  const failures: string[] = [];
  let reads = 0;
  const reader = (async () => {
    while (reading) {
      const instance = steady();
      try {
        if (instance.backend.ready) {
          await instance.backend.match({ ...hops, limit: 5 });
          reads++;
        }
      } catch (err) {
        failures.push((err as Error).message);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  try {
    await burst(20);
    await system.searchCaughtUp();

    // The node with the questions' primary shard fails; a replica becomes the primary.
    const lost = await primaryNode();
    await cluster('kill', String(lost));
    await burst(15);

    // The instance that feeds the index restarts while events wait for it; the other takes the lease.
    const feeding = burst(15);
    const holder = instances.findIndex((s) => engineOf(s).feed.isHolder);
    expect(holder).toBeGreaterThanOrEqual(0);
    await instances[holder]!.stop();
    await feeding;
    instances[holder] = await startSearch(configs[holder]!);

    await cluster('restart', String(lost));
    await burst(10);
  } finally {
    reading = false;
    await reader;
  }
  expect(failures).toEqual([]);
  expect(reads).toBeGreaterThan(10);

  await caughtUp();
  await waitFor(async () => instances.every((s) => s.backend.ready) && local.backend.ready, { what: 'every instance ready' });

  const reference = await content(local.backend);
  expect(reference.questions.length).toBe(60 - Math.ceil(60 / 7));
  expect(reference.hops.length).toBe(reference.questions.length);
  for (const instance of instances) {
    expect(instance.backend.status().questions).toBe(local.backend.status().questions);
    const shared = await content(instance.backend);
    for (const key of Object.keys(reference) as Array<keyof typeof reference>) expect([key, shared[key]]).toEqual([key, reference[key]]);
  }
}, 420_000);

/** What the engine itself says: the physical index behind the questions' alias, and the feed's lease. */
async function engineState() {
  const base = urls.split(',')[0];
  const aliases = (await (await fetch(`${base}/_alias/kn-scale-out-questions`)).json()) as Record<string, unknown>;
  const lease = (await (await fetch(`${base}/kn-scale-out-control/_doc/feed`)).json()) as { _source: { version?: number } };
  return { live: Object.keys(aliases), version: lease._source.version ?? 1 };
}

test('an instance of a newer index version builds it beside the live index and swaps it in: searches answer all along', async () => {
  const asker = await system.createUser();
  await newQuestion(system, asker.token, { title: 'Written before the upgrade: hops', description: '<p>before</p>', tags: ['hops'] });
  await caughtUp();
  const before = await engineState();
  expect(before.version).toBe(INDEX_VERSION);
  const upgraded = await startSearch(configs[1]!, { indexVersion: INDEX_VERSION + 1 });
  const failures: string[] = [];
  let reads = 0;
  let building = true;
  const reader = (async () => {
    while (building) {
      try {
        expect((await instances[0]!.backend.match({ ...hops, limit: 5 })).total).toBeGreaterThan(0);
        reads++;
      } catch (err) {
        failures.push((err as Error).message);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    for (let i = 0; i < 5; i++)
      await newQuestion(system, asker.token, {
        title: `Written during the upgrade ${i}: hops`,
        description: '<p>upgrade</p>',
        tags: ['hops'],
      });
    await waitFor(
      async () => {
        const state = await engineState();
        return state.version === INDEX_VERSION + 1 && state.live.length === 1 && state.live[0] !== before.live[0];
      },
      { timeoutMs: 120_000, what: 'the new version live, the aliases on it' },
    );
  } finally {
    building = false;
    await reader;
  }
  expect(failures).toEqual([]);
  expect(reads).toBeGreaterThan(0);

  // The new version feeds from now on; the older instances read it.
  await newQuestion(system, asker.token, { title: 'Written after the upgrade: hops', description: '<p>after</p>', tags: ['hops'] });
  await caughtUp(upgraded);
  expect(upgraded.backend.status().ready).toBe(true);
  const reference = await content(local.backend);
  for (const instance of [upgraded, instances[0]!]) {
    const shared = await content(instance.backend);
    for (const key of Object.keys(reference) as Array<keyof typeof reference>) expect([key, shared[key]]).toEqual([key, reference[key]]);
  }
}, 240_000);
