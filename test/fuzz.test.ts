// Bad input at scale: fast-check requests built from docs/openapi.json to every endpoint, through the
// real gateway and services. No 5xx, no hung request, every 4xx in the contract's error shape, and a
// request that is refused changes nothing. FUZZ_RUNS scales the number of requests (default 3000).

import { newQuestion } from './fixtures.ts';
import {
  type Actors,
  changedTables,
  describe as describeResult,
  FUZZ_SETTINGS,
  type FuzzResult,
  fuzzFixtures,
  generate,
  isErrorShape,
  keepActors,
  loadOperations,
  type Operation,
  type Summary,
  sendAll,
  snapshot,
  summarize,
  type ValueContext,
} from './fuzz.ts';
import { bearer, type System, startSystem } from './system.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20260101);
const BATCH = 100;

let system: System;
let actors: Actors;
let ctx: ValueContext;
let ops: Operation[];
let protectedUserIds: number[];
const totals = { sent: 0, serverErrors: 0 };

/** Waits until nothing is in flight: outboxes relayed, consumers caught up. */
async function quiet() {
  await Promise.all([
    system.services.content.runtime.relay.flush(),
    system.services.users.runtime.relay.flush(),
    system.services.notifications.runtime.relay.flush(),
    system.services.search.runtime.relay.flush(),
    system.services.exports.runtime.relay.flush(),
  ]);
  await system.searchCaughtUp();
  await system.routed();
}

function failures(summary: Summary, label: string): string[] {
  const lines: string[] = [];
  const list = (what: string, results: FuzzResult[]) => {
    if (results.length) lines.push(`${label}: ${results.length} ${what}:`, ...results.slice(0, 30).map((r) => `  ${describeResult(r)}`));
  };
  list('5xx answers', summary.serverErrors);
  list('hung requests (no answer within 10 s)', summary.hung);
  list('broken connections', summary.transportErrors);
  list('4xx answers without the error shape (docs/api.md)', summary.badErrorShape);
  list('answers with a status their operation does not declare (docs/openapi.json)', summary.undeclared);
  return lines;
}

beforeAll(async () => {
  system = await startSystem(FUZZ_SETTINGS);
  const fixtures = await fuzzFixtures(system);
  actors = fixtures.actors;
  ctx = fixtures.ctx;
  protectedUserIds = fixtures.protectedUserIds;
  ops = loadOperations();
}, 60_000);
afterAll(async () => {
  console.log(`fuzz: ${totals.sent} fuzzed requests sent, ${totals.serverErrors} 5xx (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED})`);
  await system?.stop();
});

test('the OpenAPI document has operations of every kind to fuzz', () => {
  expect(ops.length).toBeGreaterThan(80);
  expect(ops.some((o) => o.body?.kind === 'multipart')).toBe(true);
  expect(ops.some((o) => o.params.some((p) => p.in === 'path' && p.name === 'label'))).toBe(true);
});

test('refused requests: every one 4xx in the error shape, and nothing in any table changes', async () => {
  const count = Math.max(Math.round(RUNS / 3), ops.length);
  const requests = generate(ops, ctx, 'rejected', count, SEED);
  const problems: string[] = [];
  await quiet();
  let before = await snapshot(system.env.DATABASE_URL);
  for (let i = 0; i < requests.length; i += BATCH * 3) {
    const results = await sendAll(system.api, actors, requests.slice(i, i + BATCH * 3));
    totals.sent += results.length;
    const summary = summarize(results, ops);
    totals.serverErrors += summary.serverErrors.length;
    problems.push(...failures(summary, `refused batch ${i}`));
    const accepted = results.filter((r) => r.status >= 200 && r.status < 400);
    if (accepted.length)
      problems.push(
        `refused batch ${i}: ${accepted.length} invalid requests were accepted:`,
        ...accepted.slice(0, 20).map((r) => `  ${describeResult(r)}`),
      );
    await quiet();
    const after = await snapshot(system.env.DATABASE_URL);
    const changed = changedTables(before, after);
    if (changed.length && !accepted.length) problems.push(`refused batch ${i} changed data:`, ...changed.map((c) => `  ${c}`));
    before = after;
  }
  expect(problems).toEqual([]);
  // The comparison has teeth: an accepted change shows.
  const accepted = await system.api
    .put('/api/v1/users/me/settings')
    .set(...actors.user)
    .send({ interface_language: 'de' });
  expect(accepted.status).toBe(200);
  await quiet();
  expect(changedTables(before, await snapshot(system.env.DATABASE_URL)).length).toBeGreaterThan(0);
}, 120_000);

test('any request: no 5xx, none hangs, every 4xx in the error shape', async () => {
  const requests = keepActors(generate(ops, ctx, 'any', RUNS - Math.max(Math.round(RUNS / 3), ops.length), SEED + 1), protectedUserIds);
  const results = await sendAll(system.api, actors, requests);
  totals.sent += results.length;
  const summary = summarize(results, ops);
  totals.serverErrors += summary.serverErrors.length;
  console.log(`fuzz (any request): ${summary.sent} sent, by class ${JSON.stringify(summary.byClass)}`);
  expect(failures(summary, 'any request')).toEqual([]);
}, 180_000);

describe('regressions found by the fuzzer', () => {
  test('a path parameter that is not valid percent-encoded UTF-8 is a 400 ValidationError, not a 500', async () => {
    for (const url of [
      '/api/v1/questions/%ED%A0%80',
      '/api/v1/solutions/%ED%A0%80/publish',
      '/api/v1/tag-labels/%E0%A4%A',
      '/api/v1/users/%FF',
    ])
      for (const auth of [bearer(system.adminToken), ['x-none', '1'] as [string, string]]) {
        const res = await system.api.get(url).set(...auth);
        expect(res.status).toBeLessThan(500);
        expect(isErrorShape(res.body)).toBe(true);
      }
    const res = await system.api.put('/api/v1/solutions/%ED%A0%80/publish').set(...bearer(system.adminToken));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ValidationError');
  });

  test('NUL characters and unpaired surrogates (unstorable in Postgres) are a 400 ValidationError, and change nothing', async () => {
    await quiet();
    const before = await snapshot(system.env.DATABASE_URL);
    const [questionId] = ctx.ids;
    const me = (await system.api.get('/api/v1/users/me').set(...actors.user)).body.id;
    const cases: Array<[string, string, unknown]> = [
      ['post', `/api/v1/questions/${questionId}/comments`, { description: 'a\u0000b' }],
      ['post', `/api/v1/questions/${questionId}/forward`, { recipient: 3, user_id: 1, message: '\u0000' }],
      ['post', '/api/v1/questions', { title: 'A title with a NUL \u0000 inside', description: 'x' }],
      ['post', '/api/v1/questions', { title: 'A title with a lone surrogate \ud800', description: 'x' }],
      ['post', '/api/v1/questions', { title: 'A title with a lone key in tags', tags: ['ok', 'bad\udfff'] }],
      // A key that is kept (a field the schema does not name is ignored, whatever it holds).
      ['put', `/api/v1/users/${me}`, { customfields: { ['\u0000']: 'x' } }],
    ];
    for (const [method, url, body] of cases) {
      const res = await (system.api as unknown as Record<string, (u: string) => import('supertest').Test>)[method]!(url)
        .set(...actors.user)
        .send(body as object);
      expect([res.status, res.body.code]).toEqual([400, 'ValidationError']);
      expect(isErrorShape(res.body)).toBe(true);
    }
    const query = await system.api.get('/api/v1/questions?query=%00').set(...actors.user);
    expect(query.status).toBe(400);
    const label = await system.api.get('/api/v1/tag-labels/a%00b').set(...actors.user);
    expect(label.status).toBe(400);
    await quiet();
    expect(changedTables(before, await snapshot(system.env.DATABASE_URL))).toEqual([]);
  });

  test('a body under BODY_LIMIT that is larger than a NATS message is forwarded whole (neither 413 nor 503)', async () => {
    // A question of its own: the fuzzed requests before may have deleted the fixtures' questions.
    const questionId = (await newQuestion(system, system.adminToken, { title: 'A question with a very long description' })).id;
    const description = 'é'.repeat(524_188);
    const res = await system.api
      .put(`/api/v1/questions/${questionId}`)
      .set(...bearer(system.adminToken))
      .send({ description });
    expect(res.status).toBe(200);
    expect(res.body.description).toBe(description);
  });

  test('ids in bodies are integers: true, [5], "0x10" or "1e3" are a 400, not coerced (true was user 1)', async () => {
    for (const user_id of [true, [5], '0x10', '1e3', ' 7', 1.5])
      expect(
        (
          await system.api
            .post('/api/v1/auth/tokens')
            .set(...bearer(system.adminToken))
            .send({ user_id })
        ).status,
      ).toBe(400);
    const [questionId] = ctx.ids;
    expect(
      (
        await system.api
          .put(`/api/v1/questions/${questionId}`)
          .set(...actors.user)
          .send({ category: true })
      ).status,
    ).toBe(400);
    expect((await system.api.get('/api/v1/questions/1e0').set(...actors.user)).status).toBe(400);
    expect((await system.api.get(`/api/v1/questions/${questionId}`).set(...actors.user)).status).toBe(200);
  });

  test('a JSON body in a charset other than UTF-8/16/32 (UTF-7) is refused with 415, not decoded', async () => {
    const res = await system.api
      .put('/api/v1/users/me/settings')
      .set(...bearer(system.adminToken))
      .set('content-type', 'application/json; charset=utf-7')
      .send('{"interface_language":"+AGQ-e"}');
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UnsupportedMediaType');
    const ok = await system.api
      .put('/api/v1/users/me/settings')
      .set(...bearer(system.adminToken))
      .set('content-type', 'application/json; charset=UTF-8')
      .send('{"interface_language":"en"}');
    expect(ok.status).toBe(200);
  });

  test('a URL over the HTTP header limit is answered (431) by the server, not left hanging', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number | string>((resolve) => {
      const req = request(`${system.url}/api/v1/questions?query=${'x'.repeat(100_000)}`, { method: 'GET' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.setTimeout(10_000, () => resolve('hung'));
      req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? 'error'));
      req.end();
    });
    expect([431, 'ECONNRESET', 'EPIPE']).toContain(status);
  });
});
