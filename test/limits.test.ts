import { call } from '@kn/bus';
import { contentOperations } from '@kn/contracts';
import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import { scrapeMetric, waitFor } from '@kn/testing';
import supertest from 'supertest';
import { publishedQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
let second: Awaited<ReturnType<typeof startGateway>>;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let bob: U;

beforeAll(async () => {
  system = await startSystem();
  // A second gateway beside the first: limits and idempotency keys are shared between them.
  second = await startGateway(loadGatewayConfig(system.env));
  alice = await system.createUser({ firstname: 'Alice' });
  bob = await system.createUser({ firstname: 'Bob' });
}, 60_000);
afterAll(async () => {
  await second?.stop();
  await system?.stop();
});

const gateways = () => [system.api, supertest(second.url)];

async function settings(values: Record<string, number>) {
  const res = await system.api
    .put('/api/v1/settings')
    .set(...bearer(system.adminToken))
    .send(values);
  expect(res.status).toBe(200);
  await system.services.users.runtime.relay.flush();
}

describe('rate limits', () => {
  test('per token, shared by the gateways: RateLimit headers, then 429 RateLimited with Retry-After; other tokens go on', async () => {
    await settings({ rate_limit_per_minute: 5 });
    // Both gateways learn the new limit from the settings event.
    for (const api of gateways())
      await waitFor(async () => (await api.get('/api/v1/users/me').set(...bob.auth)).headers['ratelimit-limit'] === '5', {
        what: 'the new limit',
      });
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(
        await gateways()
          [i % 2]!.get('/api/v1/users/me')
          .set(...alice.auth),
      );
    expect(answers.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.slice(0, 5).map((r) => Number(r.headers['ratelimit-remaining']))).toEqual([4, 3, 2, 1, 0]);
    expect(Number(answers[0]!.headers['ratelimit-reset'])).toBeGreaterThan(0);
    const refused = answers[5]!;
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RateLimited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // A refused request changes nothing and other callers are not affected.
    const other = await system.createUser({ firstname: 'Carol' });
    expect((await system.api.get('/api/v1/users/me').set(...other.auth)).status).toBe(200);
    await settings({ rate_limit_per_minute: 0 });
    await waitFor(async () => (await system.api.get('/api/v1/users/me').set(...alice.auth)).status === 200, { what: 'no limit' });
    expect((await system.api.get('/api/v1/users/me').set(...alice.auth)).headers['ratelimit-limit']).toBeUndefined();
  });

  test('log-in attempts are limited per email address, whatever the password', async () => {
    // A user who has not logged in this minute but once (createUser logs in).
    const carol = await system.createUser({ firstname: 'Carol' });
    await settings({ login_attempts_per_minute: 3 });
    const email = `  ${String(carol.user.email).toUpperCase()}`;
    const tries = [];
    for (const password of ['wrong-1', 'wrong-2', 'password-1234', 'password-1234'])
      tries.push(await gateways()[tries.length % 2]!.post('/api/v1/auth/login').send({ email, password }));
    // The log-in of createUser counted too: three attempts, then no more, even with the right password
    // from this client, which failed there itself (test/login-limits.test.ts: one that did not gets in).
    expect(tries.map((t) => t.status)).toEqual([401, 401, 429, 429]);
    expect(tries[3]!.body.code).toBe('RateLimited');
    // Another address is not held back.
    expect((await system.api.post('/api/v1/auth/login').send({ email: bob.user.email, password: 'password-1234' })).status).toBe(200);
    await settings({ login_attempts_per_minute: 10 });
  });
});

describe('Idempotency-Key', () => {
  const draft = { title: 'Is this question created only once?', description: '<p>idempotent</p>' };
  /** How many questions (drafts too) the user has. */
  const mine = async (user: U) =>
    (await system.services.content.runtime.db.selectFrom('questions').select('id').where('author_id', '=', user.user.id).execute()).length;

  test('the same key and body: the same answer, from either gateway, and one question', async () => {
    const before = await mine(bob);
    const [api, other] = gateways();
    const first = await api!
      .post('/api/v1/questions')
      .set(...bob.auth)
      .set('Idempotency-Key', 'create-1')
      .send(draft);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await other!
      .post('/api/v1/questions')
      .set(...bob.auth)
      .set('Idempotency-Key', 'create-1')
      .send(draft);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await mine(bob)).toBe(before + 1);
    // Another caller's key of the same name is theirs.
    const alices = await api!
      .post('/api/v1/questions')
      .set(...alice.auth)
      .set('Idempotency-Key', 'create-1')
      .send(draft);
    expect(alices.status).toBe(201);
    expect(alices.body.id).not.toBe(first.body.id);
  });

  test('the same key with another body is a conflict; a refused request is answered the same way again', async () => {
    const res = await system.api
      .post('/api/v1/questions')
      .set(...bob.auth)
      .set('Idempotency-Key', 'create-2')
      .send(draft);
    expect(res.status).toBe(201);
    const changed = await system.api
      .post('/api/v1/questions')
      .set(...bob.auth)
      .set('Idempotency-Key', 'create-2')
      .send({ ...draft, title: 'Another title for the same key' });
    expect(changed.status).toBe(409);
    expect(changed.body.code).toBe('Conflict');
    // Refused by the content service (the gateway's own validation comes before the key counts).
    const answer = () =>
      system.api
        .post('/api/v1/questions/999999/solutions')
        .set(...bob.auth)
        .set('Idempotency-Key', 'create-3')
        .send({ description: '<p>an answer</p>' });
    const refused = await answer();
    expect(refused.status).toBe(404);
    const replayed = await answer();
    expect([replayed.status, replayed.body]).toEqual([404, refused.body]);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const badKey = await system.api
      .post('/api/v1/questions')
      .set(...bob.auth)
      .set('Idempotency-Key', 'with space')
      .send(draft);
    expect([badKey.status, badKey.body.code]).toEqual([400, 'ValidationError']);
  });

  test('two requests with one key at the same time: one question, and both get its answer', async () => {
    const before = await mine(alice);
    const both = await Promise.all(
      gateways().map((api) =>
        api
          .post('/api/v1/questions')
          .set(...alice.auth)
          .set('Idempotency-Key', 'race-1')
          .send(draft),
      ),
    );
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect(both[1]!.body).toEqual(both[0]!.body);
    expect(await mine(alice)).toBe(before + 1);
  });

  test('a retry while the first attempt is still running waits for it and answers what it answered', async () => {
    const before = await mine(alice);
    const [api, other] = gateways();
    const send = (gateway: typeof api) =>
      gateway!
        .post('/api/v1/questions')
        .set(...alice.auth)
        .set('Idempotency-Key', 'held-1')
        .send(draft)
        .then((r) => r);
    const { first, retry } = await system.holding('content.questions', async (waiting) => {
      const first = send(api);
      await waiting('relation');
      // The retry reaches the other gateway, which sees the first attempt's claim and waits for its answer.
      const retry = send(other);
      await waitFor(
        async () => (await scrapeMetric(second.metricsUrl, 'kn_idempotency_waiting_requests')).get('{process="gateway"}') === 1,
        {
          what: 'the retry waiting',
        },
      );
      return { first, retry };
    });
    const [a, b] = [await first, await retry];
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body).toEqual(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(await mine(alice)).toBe(before + 1);
  });

  test('a retry that reaches the service while its first attempt runs there waits for it (never a domain error of its own)', async () => {
    const question = await publishedQuestion(system, bob.token);
    // What the gateway sends when it gave up on the first attempt (503) and the client retried: one
    // draft answer per user and question, so a retry run beside its first attempt would be refused.
    const answer = (requestKey: string) =>
      call(system.services.content.runtime.bus, 'createSolution', contentOperations.createSolution, {
        actor: { id: alice.user.id, roles: ['user', 'api_user'], token_id: null },
        params: { id: question },
        query: undefined,
        body: { description: '<p>answered once while held</p>' },
        requestId: 'held-at-the-service',
        url: `/api/v1/questions/${question}/solutions`,
        requestKey,
      } as never) as Promise<{ id: number }>;
    const key = `held-${Date.now()}`;
    const [first, retry] = await system.holding('content.solutions', async (waiting) => {
      const first = answer(key);
      await waiting('relation');
      const retry = answer(key);
      await waiting('advisory');
      return [first, retry];
    });
    const answers = await Promise.all([first, retry]);
    expect(answers[1]).toEqual(answers[0]);
    const drafts = await system.services.content.runtime.db
      .selectFrom('solutions')
      .select('id')
      .where('question_id', '=', question)
      .where('author_id', '=', alice.user.id)
      .execute();
    expect(drafts).toEqual([{ id: answers[0]!.id }]);
  });

  test('a retry after a lost answer changes nothing: the service kept the key with its change', async () => {
    // What the gateway sends for a POST with a key (the caller and the key, hashed), straight to the service.
    const ask = (requestKey: string) =>
      call(system.services.content.runtime.bus, 'createQuestion', contentOperations.createQuestion, {
        actor: { id: alice.user.id, roles: ['user', 'api_user'], token_id: null },
        params: undefined,
        query: undefined,
        body: { title: 'Asked once, answered twice', description: '<p>lost answer</p>' } as never,
        requestId: 'lost-answer',
        url: '/api/v1/questions',
        requestKey,
      } as never) as Promise<{ id: number }>;
    const key = `lost-answer-${Date.now()}`;
    const before = await mine(alice);
    const first = await ask(key);
    expect(await mine(alice)).toBe(before + 1);
    const { db } = system.services.content.runtime;
    const kept = await db.selectFrom('request_keys').select('reply').where('key', '=', key).executeTakeFirstOrThrow();
    expect(JSON.parse(kept.reply!).id).toBe(first.id);
    // The first answer was lost on the way; the retry gets the kept one and creates nothing.
    expect((await ask(key)).id).toBe(first.id);
    // The process stopped between the change and keeping the answer: the retry is refused, still one question.
    await db.updateTable('request_keys').set({ reply: null }).where('key', '=', key).execute();
    await expect(ask(key)).rejects.toMatchObject({ status: 409, code: 'Conflict' });
    expect(await mine(alice)).toBe(before + 1);
  }, 20_000);
});

test('a change whose event is larger than a NATS message is published (through the object store), and later events still flow', async () => {
  // The description and its text both travel in the event: 2 × 600 kB is over NATS's 1 MB.
  const huge = await system.api
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ title: 'Too large for one message', description: `<p>${'x'.repeat(600_000)}</p>` });
  expect(huge.status).toBe(201);
  const next = await system.api
    .post('/api/v1/questions')
    .set(...alice.auth)
    .send({ title: 'Small enough to publish' });
  expect(next.status).toBe(201);
  await system.services.content.runtime.relay.flush();
  expect(await system.services.content.runtime.db.selectFrom('outbox').select('id').execute()).toHaveLength(0);
});
