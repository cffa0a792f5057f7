// Cost of the split: GET /users/:id through the gateway and the users service (separate processes,
// NATS request/reply, token check on every request) beside a single express process answering the
// same query straight from Postgres. Run: pnpm bench:users

import { turnBatched } from '@kn/db';
import type autocannon from 'autocannon';
import express from 'express';
import pg from 'pg';
import { bearer, benchSpace, load, login, referenceText, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const USERS = 1000;
const space = await benchSpace();
const { databaseUrl } = space;
const env = serviceEnv({ databaseUrl, namespace: space.namespace }, 18080);

const usersService = await startProcess('services/users/src/main.ts', env, 'users service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const base = 'http://127.0.0.1:18080/api/v1';
try {
  const admin = await login(base);
  const headers = { ...bearer(admin), 'content-type': 'application/json' };
  for (let i = 0; i < USERS; i++)
    await admin.call('createUser', {
      body: { email: `bench${i}@example.com`, firstname: `First${i}`, lastname: `Last${i}`, language: 'en' },
    });
  const requests = (prefix: string): autocannon.Request[] => [
    { method: 'GET', setupRequest: (req) => ({ ...req, path: `${prefix}/${2 + Math.floor(Math.random() * USERS)}` }) },
  ];

  // Warm up both paths, then measure.
  await load({ url: `${base}/users/2`, connections: CONNECTIONS, seconds: 2, headers });
  const split = await load({
    url: 'http://127.0.0.1:18080',
    connections: CONNECTIONS,
    seconds: SECONDS,
    headers,
    requests: requests('/api/v1/users'),
    processes: { gateway: gateway.pid!, users: usersService.pid! },
  });

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // Prepared and batched per event-loop turn, as the users service reads (packages/db): the split is
  // compared on the same database work.
  const readUser = turnBatched(async (ids: number[]) => {
    const { rows } = await pool.query({ name: 'users', text: 'select * from users.users where id = any($1::int[])', values: [ids] });
    return new Map(rows.map((r) => [r.id as number, r]));
  });
  const single = express();
  single.get('/users/:id', async (req, res) => {
    const row = await readUser(Number(req.params.id));
    if (!row) return void res.status(404).json({ code: 'NotFound' });
    const { password_hash: _p, search_text: _s, language_settings: _l, email_settings: _e, ...user } = row;
    res.json(user);
  });
  const server = single.listen(18081, '127.0.0.1');
  await load({ url: 'http://127.0.0.1:18081/users/2', connections: CONNECTIONS, seconds: 2 });
  const baseline = await load({
    url: 'http://127.0.0.1:18081',
    connections: CONNECTIONS,
    seconds: SECONDS,
    requests: requests('/users'),
    processes: { 'this process (server and load)': process.pid },
  });
  server.close();
  await pool.end();

  report(`GET /users/:id, ${CONNECTIONS} connections, ${SECONDS} s each, ${USERS} users`, 'pnpm bench:users', [
    { path: 'gateway → NATS → users service → Postgres (with token check)', ...split },
    { path: 'single express process → Postgres', ...baseline },
  ]);
  console.log(
    `headline: GET /users/:id split/single throughput ${(split.requests_per_second / baseline.requests_per_second).toFixed(2)} (target ≥ 0.6); split p99 ${split.p99_ms} ms; ${referenceText()}`,
  );
} finally {
  await stopProcess(gateway);
  await stopProcess(usersService);
  await space.drop();
}
