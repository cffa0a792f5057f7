// The whole system as separate processes on a seeded network, and the mixed read/write workload
// of the scale and soak benchmarks (autocannon requests).
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connectBus } from '@kn/bus';
import { indexStatus } from '@kn/search';
import { createLogger } from '@kn/telemetry';
import type autocannon from 'autocannon';
import { seedContent, seedUsers, writeImportEvents } from './content-seed.ts';
import { benchSpace, login, startProcess, stopProcess } from './lib.ts';

const SERVICES = ['users', 'content', 'notifications', 'search', 'exports'] as const;

/**
 * `instances` of every service and of the gateway (ports 18100…) against a fresh database and
 * NATS namespace, on a network of `questions` questions (three solutions each) and 1,000 users,
 * every search instance caught up; `token` is the administrator's (rate limits lifted).
 */
export async function startBenchSystem(options: { instances: number; questions: number }) {
  const { instances, questions } = options;
  const space = await benchSpace();
  const { id, databaseUrl } = space;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_NAMESPACE: space.namespace,
    LOG_LEVEL: 'info',
    ADMIN_PASSWORD: 'bench-admin-password',
    HOST: '127.0.0.1',
    // Publishing routes a question to experts; mail goes nowhere (no SMTP server: retried later).
    SMTP_URL: 'smtp://127.0.0.1:1',
  };
  const processes: Array<{ name: string; child: ChildProcess }> = [];
  const bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    namespace: env.NATS_NAMESPACE,
    name: 'bench',
    logger: createLogger('bench', 'warn'),
  });
  const stop = async () => {
    await Promise.all(processes.reverse().map((p) => stopProcess(p.child)));
    await bus.close();
    await space.drop();
    rmSync(`/tmp/kn-bench-${id}`, { recursive: true, force: true });
  };
  try {
    // The first instances create the schemas and streams before the others start.
    for (let n = 0; n < instances; n++)
      for (const service of SERVICES) {
        const child = await startProcess(
          `services/${service}/src/main.ts`,
          { ...env, SEARCH_INDEX_PATH: `/tmp/kn-bench-${id}/index-${n}.sqlite` },
          `${service} service ready`,
        );
        processes.push({ name: `${service}${instances > 1 ? ` ${n + 1}` : ''}`, child });
      }
    const gateways = Array.from({ length: instances }, (_, n) => `http://127.0.0.1:${18100 + n}`);
    for (const [n] of gateways.entries())
      processes.push({
        name: `gateway${instances > 1 ? ` ${n + 1}` : ''}`,
        child: await startProcess('gateway/src/main.ts', { ...env, PORT: String(18100 + n) }, 'gateway listening'),
      });
    await seedUsers(databaseUrl, 1_000);
    await seedContent(databaseUrl, { questions, users: 1_000 });
    await writeImportEvents(databaseUrl);
    // Every search instance has the whole index when a run of answers (from any of them) says so.
    for (let ready = 0; ready < 10 * instances; ) {
      const status = await indexStatus(bus).catch(() => null);
      ready = status?.ready && status.questions >= questions ? ready + 1 : 0;
      await new Promise((r) => setTimeout(r, 100));
    }
    const token = (await login(`${gateways[0]}/api/v1`)).options.token!;
    return { gateways, token, processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const WORDS = ['beer', 'hops', 'yeast', 'wine', 'barrel', 'stout', 'lager', 'whisky', 'glass', 'temperature', 'bottle', 'brew'];

const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)]!;
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
export function mixedRound(questions: number): autocannon.Request[] {
  const randomQuestion = () => 1 + Math.floor(Math.random() * questions);
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
