// GET /questions (default order, 10 items) and GET /questions/:id/complete on a large network
// (100,000 questions, 300,000 solutions by default; QUESTIONS=10000 for a quick run), through the
// gateway and the content service as separate processes, 32 connections. Run: pnpm bench:content
import type autocannon from 'autocannon';
import { seedContent } from './content-seed.ts';
import { bearer, benchSpace, load, login, referenceText, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const QUESTIONS = Number(process.env.QUESTIONS ?? 100_000);
const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const space = await benchSpace();
const { databaseUrl } = space;
const env = serviceEnv({ databaseUrl, namespace: space.namespace }, 18090);

const users = await startProcess('services/users/src/main.ts', env, 'users service ready');
const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
try {
  const started = Date.now();
  await seedContent(databaseUrl, { questions: QUESTIONS });
  console.log(`seeded ${QUESTIONS} questions, ${QUESTIONS * 3} solutions in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const base = 'http://127.0.0.1:18090';
  const headers = bearer(await login(`${base}/api/v1`));
  const complete: autocannon.Request[] = [
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/questions/${1 + Math.floor(Math.random() * QUESTIONS)}/complete` }) },
  ];
  const list: autocannon.Request[] = [{ method: 'GET', path: '/api/v1/questions?limit=10' }];
  const deepPage: autocannon.Request[] = [
    {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: `/api/v1/questions?limit=10&offset=${Math.floor(Math.random() * 1000) * 10}` }),
    },
  ];
  const filtered: autocannon.Request[] = [{ method: 'GET', path: '/api/v1/questions?limit=10&tags=tag-7&sort=view_count.desc' }];
  await load({ url: base, connections: CONNECTIONS, seconds: 2, headers, requests: list });
  const rows = [];
  for (const [name, requests] of [
    ['GET /questions?limit=10 (default order)', list],
    ['GET /questions/:id/complete (random id)', complete],
    ['GET /questions?limit=10&offset=0..9990', deepPage],
    ['GET /questions?tags=tag-7&sort=view_count.desc', filtered],
  ] as const)
    rows.push({
      request: name,
      ...(await load({
        url: base,
        connections: CONNECTIONS,
        seconds: SECONDS,
        headers,
        requests: [...requests],
        processes: { gateway: gateway.pid!, content: content.pid! },
      })),
    });
  report(
    `Content reads, ${QUESTIONS} questions, ${QUESTIONS * 3} solutions, ${CONNECTIONS} connections, ${SECONDS} s each`,
    'pnpm bench:content',
    rows,
  );
  const p99 = rows.slice(0, 2).map((r) => `${r.p99_ms} ms`);
  console.log(
    `headline: ${QUESTIONS} questions, ${CONNECTIONS} connections: GET /questions p99 ${p99[0]}, /complete p99 ${p99[1]} (target < 50 ms; < 60 ms at 1,000,000 questions); ${referenceText()}`,
  );
} finally {
  await stopProcess(gateway);
  await stopProcess(content);
  await stopProcess(users);
  await space.drop();
}
