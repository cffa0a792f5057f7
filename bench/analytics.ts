// The analytics service at scale: its catch-up from the streams (a first start reads every event)
// and the dashboard's answers under load. Events of BENCH_QUESTIONS questions (published, a solution
// for three in four, an acceptance for two in five, a routing each) are written straight to the
// streams, as the content and search services would have; then the service starts and reads them.
// Run: pnpm bench:analytics (BENCH_QUESTIONS=1000000 for the target's size; BENCH_SECONDS per load)

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connectBus, ensureStream } from '@kn/bus';
import { type EventSubject, events } from '@kn/contracts';
import { createLogger } from '@kn/telemetry';
import pg from 'pg';
import { bearer, benchSpace, load, login, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;
const PEOPLE = 5000;
const TAGS = Array.from({ length: 300 }, (_, i) => `tag-${i}`);
const DEPARTMENTS = Array.from({ length: 20 }, (_, i) => `Department ${i}`);
const SPAN_MS = 2 * 365 * 86_400_000;
const END = Date.parse('2026-12-01T00:00:00.000Z');
const START = END - SPAN_MS;

const space = await benchSpace();
const env = serviceEnv(space, 18080);
const bus = await connectBus({
  url: 'nats://127.0.0.1:4222',
  namespace: space.namespace,
  name: 'bench',
  logger: createLogger('bench', 'warn'),
});
const processes: Array<Awaited<ReturnType<typeof startProcess>>> = [];
let random = 42;
/** A deterministic sequence: every run writes the same network. */
const next = () => {
  random = (random * 1_103_515_245 + 12_345) % 2_147_483_648;
  return random / 2_147_483_648;
};
const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
const iso = (ms: number) => new Date(ms).toISOString();

let pending: Array<Promise<unknown>> = [];
let written = 0;
async function publish<S extends EventSubject>(subject: S, data: unknown, at: number) {
  const envelope = { id: randomUUID(), subject, occurred_at: iso(at), actor_id: null, data };
  pending.push(bus.js.publish(bus.subject(subject), JSON.stringify(envelope), { msgID: envelope.id }));
  written++;
  if (pending.length >= 2000) {
    await Promise.all(pending);
    pending = [];
  }
}

/** One valid payload of each kind is checked against the catalogue: a bench of events the service would reject measures nothing. */
const checked = new Set<string>();
const valid = <T>(subject: EventSubject, data: T) => {
  if (!checked.has(subject)) {
    events[subject].parse(data);
    checked.add(subject);
  }
  return data;
};

async function writeNetwork() {
  for (const service of ['users', 'content', 'search'] as const) await ensureStream(bus, service);
  for (let id = 2; id < PEOPLE + 2; id++) {
    const user = {
      id,
      firstname: 'Bench',
      lastname: `Person ${id}`,
      email: `p${id}@example.com`,
      auth_type: 'password',
      is_deleted: false,
      is_active: true,
      is_hidden: false,
      is_system: false,
      language: 'en',
      gender: null,
      location: `City ${id % 7}`,
      about: null,
      company: null,
      department: DEPARTMENTS[id % DEPARTMENTS.length]!,
      position: null,
      country: null,
      image: '',
      first_seen: iso(START),
      last_seen: null,
      customfields: {},
      score_level: null,
      score_points: null,
      event_tracking_id: `p${id}`,
      roles: ['user'],
    };
    await publish('users.user.created.v1', valid('users.user.created.v1', { user }), START);
  }
  let solutionId = 0;
  for (let id = 1; id <= QUESTIONS; id++) {
    const asked = START + Math.floor((SPAN_MS * id) / QUESTIONS);
    const author = 2 + Math.floor(next() * PEOPLE);
    const tags = [pick(TAGS), pick(TAGS)].filter((t, i, all) => all.indexOf(t) === i).map((label) => ({ id: label, label }));
    const title = `Bench question ${id}`;
    const question = {
      id,
      author_id: author,
      is_published: true,
      published: iso(asked),
      is_deleted: false,
      language: 'en',
      title,
      slug: `bench-question-${id}`,
      description: null,
      description_text: '',
      mentions: [],
      tags,
      category: null,
      knowledge_space: null,
      knowledge_space_id: null,
      followers: [],
      solution_count: 0,
      view_count: 0,
      upvote_count: 0,
      created: iso(asked),
      updated: iso(asked),
      content_updated: iso(asked),
      last_activity: iso(asked),
    };
    await publish('content.question.published.v1', valid('content.question.published.v1', { question, followers: [] }), asked);
    const experts = Array.from({ length: Math.floor(next() * 4) }, () => 2 + Math.floor(next() * PEOPLE));
    const routing = {
      routing_id: id,
      reason: 'published',
      source_event_id: randomUUID(),
      question: { id, title, author_id: author, knowledge_space_id: null },
      requested_by: null,
      tags: tags.map((t) => t.label),
      experts: experts.map((user_id) => ({ user_id, score: 1, expert_tags: [] })),
    };
    await publish('search.experts.found.v1', valid('search.experts.found.v1', routing), asked + 1000);
    if (next() < 0.75) {
      const solved = asked + Math.floor(next() * next() * 14 * 86_400_000);
      const accepted = next() < 0.6 ? solved + Math.floor(next() * 3 * 86_400_000) : null;
      const solution = {
        id: ++solutionId,
        question_id: id,
        author_id: experts[0] ?? 2 + Math.floor(next() * PEOPLE),
        description: '<p>Bench answer.</p>',
        text: 'Bench answer.',
        language: 'en',
        is_published: true,
        published: iso(solved),
        is_deleted: false,
        rating: null,
        rating_count: 0,
        upvote_count: 0,
        accepted_by_question_poser: null as string | null,
        validity_period: 'year_one',
        expires: iso(solved + 365 * 86_400_000),
        created: iso(solved),
        updated: iso(solved),
        content_updated: iso(solved),
      };
      const summary = { id, title, author_id: author, is_published: true, knowledge_space_id: null, followers: [] };
      await publish(
        'content.solution.published.v1',
        valid('content.solution.published.v1', { solution, question: summary, mentions: [] }),
        solved,
      );
      if (accepted !== null)
        await publish(
          'content.solution.accepted.v1',
          valid('content.solution.accepted.v1', {
            solution: { ...solution, accepted_by_question_poser: iso(accepted) },
            question: summary,
          }),
          accepted,
        );
    }
  }
  await Promise.all(pending);
}

/** The resident memory of a process now and at its peak (Linux /proc), in MiB. */
function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

try {
  // The users service answers the gateway's token checks later; started first, a failure shows before the long part.
  processes.push(await startProcess('services/users/src/main.ts', env, 'users service ready'));
  const writing = performance.now();
  await writeNetwork();
  const writeSeconds = (performance.now() - writing) / 1000;
  const total = await Promise.all(
    (['users', 'content', 'search'] as const).map(async (s) => (await bus.jsm.streams.info(bus.streamName(s))).state.last_seq),
  );
  const target = total.reduce((a, b) => a + b, 0);
  console.log(`${written} events written in ${writeSeconds.toFixed(0)} s; the analytics service starts`);

  const started = performance.now();
  const analytics = await startProcess('services/analytics/src/main.ts', env, 'analytics service ready');
  processes.push(analytics);
  const db = new pg.Pool({ connectionString: space.databaseUrl, max: 1 });
  let peak = 0;
  let polls = 0;
  for (;;) {
    const { rows } = await db.query<{ n: string }>('select coalesce(sum(seq), 0) as n from analytics.feed_positions');
    peak = Math.max(peak, memory(analytics.pid!).rss);
    if (Number(rows[0]!.n) >= target) break;
    if (++polls % 30 === 0)
      console.error(`catch-up: ${rows[0]!.n} of ${target} events after ${Math.round((performance.now() - started) / 1000)} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const catchUpSeconds = (performance.now() - started) / 1000;
  const afterCatchUp = memory(analytics.pid!);
  await db.end();

  processes.push(await startProcess('gateway/src/main.ts', env, 'gateway listening'));
  const base = 'http://127.0.0.1:18080/api/v1';
  const admin = await login(base);
  const headers = bearer(admin);
  const year = 'from=2025-12-01&to=2026-12-01';
  const dashboards: Array<[string, string]> = [
    ['flow, network, weeks of a year', `/analytics/flow?${year}&granularity=week`],
    ['flow, per tag, months of two years', '/analytics/flow?from=2024-12-01&to=2026-12-01&granularity=month&dimension=tag'],
    ['flow, one tag, days of a month', '/analytics/flow?from=2026-10-01&to=2026-11-01&granularity=day&dimension=tag&value=tag-7'],
    ['flow, per department, weeks of a quarter', '/analytics/flow?from=2026-09-01&to=2026-12-01&granularity=week&dimension=department'],
    ['content health', '/analytics/health?within_days=30&after_days=14'],
    ['review queue, first page', '/analytics/health/queue?limit=50'],
    ['routing, a quarter', '/analytics/routing?from=2026-09-01&to=2026-12-01'],
  ];
  const rows: Record<string, unknown>[] = [
    {
      what: `catch-up of ${target} events (${QUESTIONS} questions)`,
      seconds: Math.round(catchUpSeconds),
      events_per_second: Math.round(target / catchUpSeconds),
      rss_mib: `peak ${Math.max(peak, afterCatchUp.peak)}, after ${afterCatchUp.rss}`,
    },
  ];
  for (const [what, path] of dashboards) {
    // The first request computes the figures; the load after it reads the answer cache (ANALYTICS_CACHE_MS).
    const first = performance.now();
    const computed = await fetch(`http://127.0.0.1:18080/api/v1${path}`, { headers });
    if (!computed.ok) throw new Error(`${path}: ${computed.status} ${await computed.text()}`);
    await computed.arrayBuffer();
    const firstMs = Math.round(performance.now() - first);
    await load({ url: `http://127.0.0.1:18080/api/v1${path}`, connections: CONNECTIONS, seconds: 1, headers });
    const result = await load({
      url: `http://127.0.0.1:18080/api/v1${path}`,
      connections: CONNECTIONS,
      seconds: SECONDS,
      headers,
      processes: { analytics: analytics.pid! },
    });
    rows.push({ what, first_ms: firstMs, ...result, rss_mib: memory(analytics.pid!).rss });
  }
  report(
    `Analytics: catch-up from the streams and the dashboard at ${CONNECTIONS} connections`,
    `BENCH_QUESTIONS=${QUESTIONS} BENCH_SECONDS=${SECONDS} pnpm bench:analytics`,
    rows,
  );
} finally {
  for (const p of processes.reverse()) await stopProcess(p);
  await bus.close();
  await space.drop();
}
