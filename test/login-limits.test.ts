import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import supertest from 'supertest';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

// Log-in throttling (docs/operations.md, "Limits"), at the default login_attempts_per_minute (10).
// The gateway trusts the proxy on loopback (TRUST_PROXY): each test names its client as a proxy
// appending the address it sees to X-Forwarded-For would.
let system: System;
let untrusting: Awaited<ReturnType<typeof startGateway>>;
type U = Awaited<ReturnType<System['createUser']>>;
let victim: U;
let bystander: U;
const PASSWORD = 'password-1234';

beforeAll(async () => {
  system = await startSystem({ TRUST_PROXY: 'loopback' });
  // A gateway beside it as deployed without a proxy: X-Forwarded-For names nobody.
  untrusting = await startGateway(loadGatewayConfig({ ...system.env, TRUST_PROXY: 'false' }));
  victim = await system.createUser({ firstname: 'Victim' });
  bystander = await system.createUser({ firstname: 'Bystander' });
}, 60_000);
afterAll(async () => {
  await untrusting?.stop();
  await system?.stop();
});

/** A log-in from a client address, through a proxy: whatever the client put in X-Forwarded-For comes first. */
const login = (client: string, email: string, password: string, spoofed = '10.9.8.7') =>
  system.api.post(`${API}/auth/login`).set('X-Forwarded-For', `${spoofed}, ${client}`).send({ email, password });

test('one client trying many addresses is held back after 10 failures (429 RateLimited, Retry-After); other clients are not', async () => {
  const answers = [];
  for (let i = 0; i < 30; i++) {
    // A different spoofed first entry each time: only the address the trusted proxy saw counts.
    answers.push(await login('198.51.100.1', `sprayed-${i}@example.com`, 'Summer2026!', `203.0.113.${i}`));
  }
  expect(answers.map((a) => a.status)).toEqual([...new Array(10).fill(401), ...new Array(20).fill(429)]);
  for (const refused of answers.slice(10)) {
    expect(refused.body.code).toBe('RateLimited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
  // Throttled, the client's attempts are not even checked: the right password does not help it.
  expect((await login('198.51.100.1', bystander.user.email, PASSWORD)).status).toBe(429);
  // Another client is not held back by it.
  expect((await login('198.51.100.2', 'sprayed-0@example.com', 'Summer2026!')).status).toBe(401);
  const ok = await login('198.51.100.2', bystander.user.email, PASSWORD);
  expect(ok.status).toBe(200);
  expect((await system.api.get(`${API}/users/me`).set(...bearer(ok.body.token))).body.id).toBe(bystander.user.id);
});

test('successful log-ins do not count against a client: many people behind one address log in', async () => {
  for (let i = 0; i < 25; i++) expect((await login('198.51.100.3', bystander.user.email, PASSWORD)).status).toBe(200);
  expect((await login('198.51.100.3', 'nobody@example.com', 'wrong')).status).toBe(401);
});

test('others can delay a person’s log-in, not lock it out: a locked address still lets in the right password from a client with nothing against it', async () => {
  const email = String(victim.user.email).toUpperCase();
  // An attacker fails on the victim's address until it is locked: 10 attempts a minute (createUser's
  // log-in counted too, unless it is older than the 6 s in which the address earns one back).
  const attack: number[] = [];
  while (attack.length < 15 && attack.at(-1) !== 429) attack.push((await login('192.0.2.1', email, `guess-${attack.length}`)).status);
  expect(attack.filter((s) => s === 401).length).toBeGreaterThanOrEqual(9);
  expect(attack.at(-1)).toBe(429);
  // The attacker's own client has failed too often to be let through at a locked address.
  expect((await login('192.0.2.1', email, PASSWORD)).status).toBe(429);
  // More attackers, each once: at a locked address a wrong password throttles that client for a minute.
  const second = await login('192.0.2.2', email, 'guess-a');
  expect(second.status).toBe(429);
  expect(second.body.code).toBe('RateLimited');
  expect((await login('192.0.2.2', email, 'guess-b')).status).toBe(429);
  expect((await login('192.0.2.2', email, PASSWORD)).status).toBe(429);

  // The victim, from a client of their own, logs in all the same.
  const mine = await login('198.51.100.7', email, PASSWORD);
  expect(mine.status).toBe(200);
  expect((await system.api.get(`${API}/users/me`).set(...bearer(mine.body.token))).body.id).toBe(victim.user.id);

  // A typo at the locked address delays that client: the right password waits for Retry-After.
  expect((await login('198.51.100.8', email, 'typo')).status).toBe(429);
  const delayed = await login('198.51.100.8', email, PASSWORD);
  expect(delayed.status).toBe(429);
  const retryAfter = Number(delayed.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);

  // After it, a fresh attacker has locked the address again; the victim's client gets in.
  system.clock.advance(61_000);
  const again = [];
  for (let i = 0; i < 11; i++) again.push((await login('192.0.2.3', email, `guess-${i}`)).status);
  expect(again).toEqual([...new Array(10).fill(401), 429]);
  expect((await login('192.0.2.4', email, 'guess-z')).status).toBe(429);
  const later = await login('198.51.100.8', email, PASSWORD);
  expect(later.status).toBe(200);
  expect((await system.api.get(`${API}/users/me`).set(...bearer(later.body.token))).body.id).toBe(victim.user.id);
});

// Last: it throttles the test process's own address (127.0.0.1) for a while.
test('without TRUST_PROXY, X-Forwarded-For does not make a client someone else', async () => {
  const api = supertest(untrusting.url);
  const statuses = [];
  for (let i = 0; i < 12; i++)
    statuses.push(
      (
        await api
          .post(`${API}/auth/login`)
          .set('X-Forwarded-For', `198.51.100.${100 + i}`)
          .send({ email: `forwarded-${i}@example.com`, password: 'wrong' })
      ).status,
    );
  expect(statuses).toEqual([...new Array(10).fill(401), 429, 429]);
});
