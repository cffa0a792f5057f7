import { MAX_LIST_ITEMS } from '@kn/contracts';
import { waitFor } from '@kn/testing';
import pg from 'pg';
import { API, newQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

// What one request may cost: lists have a cap, and work for a request the gateway has given up on
// stops. The gateway waits three seconds here, so that a held request runs out of time quickly while
// publishing on a busy 2-core machine (over a second in one CI run) still fits.
let system: System;
let token: string;

beforeAll(async () => {
  system = await startSystem({ RPC_TIMEOUT_MS: '3000' });
  token = (await system.createUser()).token;
});
afterAll(() => system?.stop());

const question = async (title: string, tags: string[]) => (await newQuestion(system, token, { title, tags })).id;

const listed = async (query: string) => {
  const res = await system.api.get(`${API}/questions?${query}`).set(...bearer(token));
  expect(res.status).toBe(200);
  return (res.body.items as Array<{ id: number }>).map((q) => q.id).sort((a, b) => a - b);
};

test('a tag filter takes up to the cap of tags (AND and OR alike), and beyond it answers 400 naming the parameter', async () => {
  const both = await question('Which yeast ferments lager cold?', ['yeast', 'lager']);
  const one = await question('Which yeast gives banana esters?', ['yeast']);
  const others = Array.from({ length: MAX_LIST_ITEMS - 2 }, (_, i) => `unused${i}`);

  expect(await listed('tags=yeast,lager')).toEqual([both]);
  expect(await listed(`tags=${['yeast', 'LAGER', ...others].join(',')}&tag_filter_default_operator=OR`)).toEqual(
    [one, both].sort((a, b) => a - b),
  );
  // All MAX_LIST_ITEMS tags must be there: no question has them.
  expect(await listed(`tags=${['yeast', 'lager', ...others].join(',')}`)).toEqual([]);

  const tooMany = await system.api.get(`${API}/questions?tags=${[...others, 'a', 'b', 'c'].join(',')}`).set(...bearer(token));
  expect(tooMany.status).toBe(400);
  expect(tooMany.body.code).toBe('ValidationError');
  expect(tooMany.body.errors).toEqual([expect.objectContaining({ path: 'query.tags' })]);
});

test('when the gateway gives up, the statement still waiting for the request is cancelled: 503 with Retry-After, and the pool serves the next', async () => {
  const watcher = new pg.Client({ connectionString: system.env.DATABASE_URL });
  await watcher.connect();
  const waitingForLocks = async () =>
    (
      await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )
    ).rows[0]!.n;
  try {
    await system.holding(
      'content.questions',
      async (waiting) => {
        const answer = system.api
          .get(`${API}/questions`)
          .set(...bearer(token))
          .then((res) => res);
        await waiting('relation');
        const res = await answer;
        expect([res.status, res.body.code, res.headers['retry-after']]).toEqual([503, 'ServiceUnavailable', '2']);
        // Still holding the lock: the request's statement is no longer waiting behind it.
        await waitFor(async () => (await waitingForLocks()) === 0, { what: 'the held statement cancelled' });
      },
      'access exclusive',
    );
  } finally {
    await watcher.end();
  }
  expect((await system.api.get(`${API}/questions`).set(...bearer(token))).status).toBe(200);
});
