import { randomBytes, randomUUID } from 'node:crypto';
import { connectBus, type NatsUser, natsAuthorizationConf, natsPermissions, passwordVariable } from '@kn/bus';
import { subscribe } from '@kn/client';
import { type EventSubject, events, SEARCH_REBUILD_SUBJECT, type StreamSubject } from '@kn/contracts';
import { createLogger } from '@kn/telemetry';
import { startNatsServer, waitFor } from '@kn/testing';
import { API, publishedQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/**
 * The locked bus: the whole system on a NATS server of its own with the generated authorization
 * (infra/nats/auth.conf for this test's namespace), every process as its own user. What every
 * service does still works, and what a user may not do, the server refuses.
 */
const users = Object.keys(natsPermissions()) as NatsUser[];
// NATS reads a variable's value as a configuration token: a password starting with a digit would be a number.
const passwords = Object.fromEntries(users.map((u) => [u, `k${randomBytes(12).toString('hex')}`])) as Record<NatsUser, string>;
const ADMIN_PASSWORD = randomBytes(12).toString('hex');
let nats: Awaited<ReturnType<typeof startNatsServer>>;
let system: System;

beforeAll(async () => {
  // The namespace is the system's own: startSystem picks it, so the configuration is written for
  // every user after the namespace is known. A test-only admin (full rights) drops the namespace.
  const namespace = `locked${randomBytes(3).toString('hex')}`;
  const conf = natsAuthorizationConf(namespace).replace('  users: [\n', `  users: [\n    { user: admin, password: "${ADMIN_PASSWORD}" }\n`);
  nats = await startNatsServer({
    config: conf,
    env: Object.fromEntries(users.map((u) => [passwordVariable(u), passwords[u]])),
  });
  system = await startSystem(
    // Megabytes of description take seconds to sanitize and store on a loaded 2-core machine: the
    // large-body test is about completeness, not speed, so the gateway waits longer.
    { NATS_URL: nats.url, NATS_NAMESPACE: namespace, RPC_TIMEOUT_MS: '60000' },
    {
      partEnv: (part) => ({ NATS_USER: part, NATS_PASSWORD: passwords[part] }),
      natsAdmin: { user: 'admin', pass: ADMIN_PASSWORD },
    },
  );
}, 120_000);
afterAll(async () => {
  await system?.stop();
  await nats?.destroy();
});

/** A connection to the test's NATS server as one of the users. */
const as = (user: NatsUser, password = passwords[user]) =>
  connectBus({
    url: nats.url,
    user,
    password,
    namespace: system.env.NATS_NAMESPACE,
    name: `probe-${user}`,
    logger: createLogger('probe', 'silent'),
  });

/** The read-only subscriber of @kn/client on the content stream, reading published questions only. */
function subscribeToPublished(durable: string, onQuestion: (question: { title: string; description?: string | null }) => void) {
  const others = (Object.keys(events) as EventSubject[]).filter((s) => s.startsWith('content.') && s !== 'content.question.published.v1');
  return subscribe({
    url: nats.url,
    user: 'subscriber',
    password: passwords.subscriber,
    namespace: system.env.NATS_NAMESPACE,
    stream: 'content',
    durable,
    ignore: others as Array<Exclude<StreamSubject<'content'>, 'content.question.published.v1'>>,
    handlers: {
      'content.question.published.v1': ({ data }) => onQuestion(data.question),
    },
  });
}

test('everything works with every process as its own user: ask, route, answer, notify, search, attach, export', async () => {
  const poser = await system.createUser();
  const answerer = await system.createUser();
  const question = await publishedQuestion(system, poser.token, 'Which permissions does a locked bus need?');
  await publishedSolution(system, answerer.token, question);
  await system.routed();
  await system.searchCaughtUp();
  await system.services.notifications.consumers.content.caughtUp();
  const notifications = await system.api.get(`${API}/notifications`).set(...poser.auth);
  expect(notifications.body.items.map((n: { type: string }) => n.type)).toContain('new_solution_to_your_question');
  const found = await system.api.get(`${API}/questions?query=permissions`).set(...poser.auth);
  expect(found.body.items.map((q: { id: number }) => q.id)).toEqual([question]);
  const attached = await system.api
    .post(`${API}/questions/${question}/attachments`)
    .set(...poser.auth)
    .attach('file', Buffer.from('locked bus notes'), { filename: 'notes.txt', contentType: 'text/plain' });
  expect(attached.status).toBe(201);
  const file = await system.api.get(`${API}/attachments/${attached.body.id}/file`).set(...poser.auth);
  expect(file.text).toBe('locked bus notes');
  const admin = bearer(system.adminToken);
  const exported = await system.api.post(`${API}/export/content`).set(...admin);
  expect(exported.status).toBe(201);
  const done = await waitFor(
    async () => {
      const record = (await system.api.get(`${API}/export/content/${exported.body.export_id}`).set(...admin)).body;
      return record.status !== 'processing' && record;
    },
    { what: 'the export' },
  );
  expect(done.status).toBe('success');
  expect((await system.api.get(`${API}/export/content/${exported.body.export_id}/file`).set(...admin)).status).toBe(200);
  expect((await system.api.get('/readyz')).status).toBe(200);
  // Nothing any process did was refused on the way (a refused rate-limit write, say, would pass silently).
  expect(nats.log().match(/.*Violation.*/g) ?? []).toEqual([]);
});

test('bodies larger than a NATS message (claim check) travel on the locked bus: request, answer, event, every reader', async () => {
  const poser = await system.createUser();
  const descriptions: string[] = [];
  const subscription = await subscribeToPublished('a-reader-of-large-events', (question) => {
    descriptions.push(question.description ?? '');
  });
  try {
    const description = `<p>${'Locked buses carry large bodies too. '.repeat(60_000)}</p><p>Zeppelin.</p>`;
    const created = await system.api
      .post(`${API}/questions`)
      .set(...poser.auth)
      .send({ title: 'How large may a description be?', description });
    expect(created.status).toBe(201);
    expect((await system.api.put(`${API}/questions/${created.body.id}/publish`).set(...poser.auth)).status).toBe(200);
    expect((await system.api.get(`${API}/questions/${created.body.id}`).set(...poser.auth)).body.description).toBe(description);
    await system.searchCaughtUp();
    const found = await system.api.get(`${API}/questions?query=zeppelin`).set(...poser.auth);
    expect(found.body.items.map((q: { id: number }) => q.id)).toEqual([created.body.id]);
    await subscription.caughtUp();
    expect(descriptions).toContain(description);
  } finally {
    await subscription.stop();
  }
  expect(nats.log().match(/.*Violation.*/g) ?? []).toEqual([]);
});

/** Publishes as a user and answers how the server took it: stored in the stream, or refused. */
async function forge(user: NatsUser, subject: string) {
  const bus = await as(user);
  const errors: string[] = [];
  void (async () => {
    for await (const s of bus.nc.status()) if (s.type === 'error') errors.push(String((s as { error?: Error }).error?.message));
  })();
  try {
    const envelope = { id: randomUUID(), subject, occurred_at: new Date().toISOString(), actor_id: null, data: { user_id: 1 } };
    const stored = await bus.js.publish(bus.subject(subject), JSON.stringify(envelope), { timeout: 2000 }).then(
      () => true,
      () => false,
    );
    await waitFor(() => errors.length > 0, { what: `the server refusing ${user}` });
    return { stored, errors };
  } finally {
    await bus.close();
  }
}

test('a service cannot publish another service’s events: the server refuses, nothing is stored', async () => {
  const { runtime } = system.services.users;
  const before = (await runtime.bus.jsm.streams.info(runtime.bus.streamName('users'))).state.last_seq;
  const forged = await forge('notifications', 'users.user.deleted.v1');
  expect(forged.stored).toBe(false);
  expect(forged.errors.join()).toMatch(/Permissions Violation for Publish to "[^"]*users\.user\.deleted\.v1"/);
  expect((await runtime.bus.jsm.streams.info(runtime.bus.streamName('users'))).state.last_seq).toBe(before);
  expect(nats.log()).toMatch(/Publish Violation - User "notifications", Subject "[^"]*users\.user\.deleted\.v1"/);
  // Its own events it may publish (the system test above shows it); the operator may ask for a rebuild.
  const operator = await as('operator');
  operator.nc.publish(operator.subject(SEARCH_REBUILD_SUBJECT), '{}');
  await operator.nc.flush();
  await operator.close();
});

test('an outside subscriber reads every stream and cannot publish at all', async () => {
  const bus = await as('subscriber');
  try {
    const stream = bus.streamName('content');
    const consumer = await bus.js.consumers.get(stream);
    const first = await consumer.next({ expires: 5_000 });
    expect(first?.json<{ subject: string }>().subject).toMatch(/^content\./);
  } finally {
    await bus.close();
  }
  for (const subject of ['content.question.published.v1', 'users.user.created.v1']) {
    const forged = await forge('subscriber', subject);
    expect(forged.stored).toBe(false);
    expect(forged.errors.join()).toMatch(/Permissions Violation for Publish/);
  }
});

test('the typed subscriber of @kn/client works as the read-only subscriber: a durable consumer, its inbox, acknowledgements', async () => {
  const titles: string[] = [];
  const subscription = await subscribeToPublished('an-outside-system', (question) => {
    titles.push(question.title);
  });
  try {
    const poser = await system.createUser();
    await publishedQuestion(system, poser.token, 'Who reads the events of a locked bus?');
    await system.services.content.runtime.relay.flush();
    await subscription.caughtUp();
    expect(titles).toContain('Who reads the events of a locked bus?');
  } finally {
    await subscription.stop();
  }
  // Nothing it did was refused (the lines of the forgeries above name other connections).
  expect((nats.log().match(/.*Violation.*/g) ?? []).filter((line) => line.includes('an-outside-system'))).toEqual([]);
});

test('a wrong password is refused at once, not retried', async () => {
  await expect(as('content', 'not-the-password')).rejects.toThrow(/Authorization Violation/i);
});
