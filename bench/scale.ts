// Scale-out: requests per second of a mixed read/write workload at 64 connections with one
// instance of every service and gateway, then with two (separate processes against the same
// Postgres and NATS, the connections split over the gateways). Each run starts on a network of
// QUESTIONS questions (default 10,000, with three solutions each) and 1,000 users.
// Run: pnpm bench:scale   (BENCH_SECONDS=20 by default, INSTANCES=1,2)
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connectBus } from '@kn/bus';
import { dropDatabase } from '@kn/db';
import { indexStatus } from '@kn/search';
import { createLogger } from '@kn/telemetry';
import type autocannon from 'autocannon';
import { seedContent, seedUsers, writeImportEvents } from './content-seed.ts';
import { type LoadResult, load, login, report, startProcess, stopProcess } from './lib.ts';

const QUESTIONS = Number(process.env.QUESTIONS ?? 10_000);
const USERS = 1_000;
const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const INSTANCES = (process.env.INSTANCES ?? '1,2').split(',').map(Number);
const SERVICES = ['users', 'content', 'notifications', 'search', 'exports'] as const;
const WORDS = ['beer', 'hops', 'yeast', 'wine', 'barrel', 'stout', 'lager', 'whisky', 'glass', 'temperature', 'bottle', 'brew'];

const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)]!;
const randomQuestion = () => 1 + Math.floor(Math.random() * QUESTIONS);
const json = (body: unknown) => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** What a connection created in this round (autocannon's per-connection context). */
interface Made {
  question?: number;
  solution?: number;
}

/**
 * One connection's round of twelve requests, seven reads and five writes: lists, questions,
 * searches, asking and publishing a question (routed to experts, indexed, notified), answering
 * another and publishing the answer, commenting.
 */
function round(): autocannon.Request[] {
  return [
    { method: 'GET', path: '/api/v1/questions?limit=10' },
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${randomQuestion()}` }) },
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions?query=${pick(WORDS)}%20${pick(WORDS)}&limit=10` }) },
    {
      ...json({
        title: `Which ${pick(WORDS)} goes with ${pick(WORDS)}?`,
        description: `<p>Asked under load about ${pick(WORDS)}.</p>`,
        tags: [pick(WORDS)],
      }),
      path: '/api/v1/questions',
      onResponse: (status, body, context) => {
        if (status === 201) (context as Made).question = JSON.parse(body).id;
      },
    },
    {
      method: 'PUT',
      setupRequest: (req, context) => ({ ...req, path: `/api/v1/questions/${(context as Made).question ?? randomQuestion()}/publish` }),
    },
    {
      ...json({ description: `<p>Try a ${pick(WORDS)} with it.</p>` }),
      setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${randomQuestion()}/solutions` }),
      onResponse: (status, body, context) => {
        if (status === 201) (context as Made).solution = JSON.parse(body).id;
      },
    },
    { method: 'PUT', setupRequest: (req, context) => ({ ...req, path: `/api/v1/solutions/${(context as Made).solution ?? 1}/publish` }) },
    { method: 'GET', path: '/api/v1/questions?limit=10&sort=date_published.desc' },
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions?query=${pick(WORDS)}&limit=10` }) },
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${randomQuestion()}/comments` }) },
    {
      ...json({ description: `<p>Also ${pick(WORDS)}.</p>` }),
      setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${randomQuestion()}/comments` }),
    },
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${randomQuestion()}` }) },
  ];
}

async function measure(instances: number): Promise<Record<string, unknown>> {
  const id = randomBytes(3).toString('hex');
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/kn_bench_${id}`;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_NAMESPACE: `bench${id}`,
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench-admin-password',
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    // Publishing routes a question to experts; mail goes nowhere (no SMTP server: retried later).
    SMTP_URL: 'smtp://127.0.0.1:1',
  };
  const processes: ChildProcess[] = [];
  const bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    namespace: env.NATS_NAMESPACE,
    name: 'bench',
    logger: createLogger('bench', 'warn'),
  });
  try {
    // The first instances create the schemas and streams before the others start.
    for (let n = 0; n < instances; n++)
      for (const service of SERVICES)
        processes.push(
          await startProcess(
            `services/${service}/src/main.ts`,
            { ...env, LOG_LEVEL: 'info', SEARCH_INDEX_PATH: `/tmp/kn-bench-scale-${id}/index-${n}.sqlite` },
            service === 'search' ? 'search service ready' : `${service} service ready`,
          ),
        );
    const gateways = Array.from({ length: instances }, (_, n) => `http://127.0.0.1:${18100 + n}`);
    for (const [n] of gateways.entries())
      processes.push(
        await startProcess('gateway/src/main.ts', { ...env, LOG_LEVEL: 'info', PORT: String(18100 + n) }, 'gateway listening'),
      );

    await seedUsers(databaseUrl, USERS);
    await seedContent(databaseUrl, { questions: QUESTIONS, users: USERS });
    await writeImportEvents(databaseUrl);
    // Every search instance has the whole index when a run of answers (from any of them) says so.
    for (let ready = 0; ready < 10 * instances; ) {
      const status = await indexStatus(bus).catch(() => null);
      ready = status?.ready && status.questions >= QUESTIONS ? ready + 1 : 0;
      await new Promise((r) => setTimeout(r, 100));
    }

    const token = await login(`${gateways[0]}/api/v1`);
    const headers = { authorization: `Bearer ${token}` };
    const run = async (seconds: number) => {
      const results: LoadResult[] = await Promise.all(
        gateways.map((url) => load({ url, connections: CONNECTIONS / instances, seconds, headers, requests: round() })),
      );
      return {
        requests_per_second: results.reduce((sum, r) => sum + r.requests_per_second, 0),
        p50_ms: Math.max(...results.map((r) => r.p50_ms)),
        p99_ms: Math.max(...results.map((r) => r.p99_ms)),
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        non_2xx: results.reduce((sum, r) => sum + r.non_2xx, 0),
      };
    };
    await run(3);
    return { instances_of_each: instances, gateways: instances, ...(await run(SECONDS)) };
  } finally {
    await Promise.all(processes.reverse().map(stopProcess));
    await bus.close();
    await dropDatabase(databaseUrl);
    rmSync(`/tmp/kn-bench-scale-${id}`, { recursive: true, force: true });
  }
}

const rows = [];
for (const instances of INSTANCES) rows.push(await measure(instances));
report(
  `Mixed workload (7 reads, 5 writes in 12), ${CONNECTIONS} connections, ${SECONDS} s, ${QUESTIONS} questions`,
  'pnpm bench:scale',
  rows,
);
if (rows.length === 2)
  console.log(`ratio two instances / one: ${(Number(rows[1]!.requests_per_second) / Number(rows[0]!.requests_per_second)).toFixed(2)}`);
process.exit(0);
