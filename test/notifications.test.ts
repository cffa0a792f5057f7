import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@kn/testing';
import { API, contentEvents, publishedQuestion, publishedSolution } from './fixtures.ts';
import { startSmtpStandIn } from './smtp-stand-in.ts';
import { bearer, type System, startSystem } from './system.ts';

type TestUser = Awaited<ReturnType<System['createUser']>>;

let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;

// A real webhook receiver: it can answer 500 or be slow for the next n requests.
const hooks: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
let failHooks = 0;
let slowHooks = 0;
const receiver: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => {
    body += c.toString('utf8');
  });
  req.on('end', () => {
    if (failHooks > 0) {
      failHooks--;
      res.statusCode = 500;
      return res.end('down');
    }
    if (slowHooks > 0) {
      // Never answers: the sender's timeout ends the request.
      slowHooks--;
      return;
    }
    hooks.push({ headers: req.headers, body });
    res.end('ok');
  });
});

const SECRET = 'a-webhook-secret-of-some-length';
let system: System;
let poser: TestUser;
let author: TestUser;
let follower: TestUser;
let other: TestUser;
let mentioned: TestUser;
let admin: TestUser;
let technical: TestUser;

const listen = (server: { listen: (port: number, host: string, cb: () => void) => unknown }) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  await listen(receiver);
  const hookPort = (receiver.address() as AddressInfo).port;
  system = await startSystem({
    SMTP_URL: smtp.url,
    EMAIL_RETRY_BASE_MS: '100',
    WEBHOOK_RETRY_BASE_MS: '100',
    OUTBOX_POLL_MS: '100',
    WEBHOOK_TIMEOUT_MS: '500',
    WEBHOOK_SECRET_TTL_MS: '100',
    // Questions are not routed to experts here (test/experts.test.ts): each test names who gets what.
    ROUTING_EXPERTS: '0',
  });
  const settings = await system.api
    .put(`${API}/settings`)
    .set(...bearer(system.adminToken))
    .send({
      webhook_enabled: true,
      webhook_url: `http://127.0.0.1:${hookPort}/hook`,
      webhook_secret: SECRET,
      solution_validation_enabled: true,
    });
  expect(settings.status).toBe(200);
  poser = await system.createUser();
  author = await system.createUser();
  follower = await system.createUser();
  other = await system.createUser();
  mentioned = await system.createUser();
  admin = await system.createUser({}, ['user', 'content_admin']);
  technical = await system.createUser({}, ['user', 'on_behalf_user']);
  await settle();
});
afterAll(async () => {
  await system?.stop();
  await smtp?.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** Waits until every event published so far has been turned into notifications. */
async function settle() {
  await system.services.users.runtime.relay.flush();
  await system.services.content.runtime.relay.flush();
  await system.services.notifications.consumers.users.caughtUp();
  await system.services.notifications.consumers.content.caughtUp();
}

async function notificationsOf(user: TestUser) {
  const res = await system.api.get(`${API}/notifications?limit=100`).set(...user.auth);
  expect(res.status).toBe(200);
  return res.body.items as Array<Record<string, any>>;
}

/** Notifications of these users about one target, as {type} per user. */
async function typesFor(users: TestUser[], targetType: string, targetId: number) {
  const out: Record<number, string[]> = {};
  for (const u of users) {
    out[u.user.id] = (await notificationsOf(u)).filter((n) => n.target_type === targetType && n.target_id === targetId).map((n) => n.type);
  }
  return out;
}

const mention = (u: TestUser) => `<span data-mention-user-id="${u.user.id}">@${u.user.firstname}</span>`;
const everyone = () => [poser, author, follower, other, mentioned, admin];

/** Decodes RFC 2047 encoded words of a header value. */
function decodeHeader(raw: string, name: string) {
  const unfolded = raw.split(/\r?\n\r?\n/)[0]?.replace(/\r?\n[ \t]+/g, ' ') ?? '';
  const line = unfolded.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`)) ?? '';
  return line
    .slice(name.length + 1)
    .trim()
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
}
const mailsTo = (u: TestUser) => smtp.mailsTo(u.user.email);

describe('notification types', () => {
  test('publishing a solution notifies the poser, followers and mentioned users, never the author; email and signed webhook', async () => {
    const q = await publishedQuestion(system, poser.token);
    expect((await system.api.put(`${API}/questions/${q}/follow`).set(...follower.auth)).status).toBe(200);
    const s = await publishedSolution(system, author.token, q, `<p>Use a remote cache, ${mention(mentioned)} knows how.</p>`);
    await settle();
    expect(await typesFor(everyone(), 'solution', s)).toEqual({
      [poser.user.id]: ['new_solution_to_your_question'],
      [follower.user.id]: ['new_solution'],
      [mentioned.user.id]: ['mention_in_solution'],
      [author.user.id]: [],
      [other.user.id]: [],
      [admin.user.id]: [],
    });
    const [n] = (await notificationsOf(poser)).filter((x) => x.target_id === s && x.target_type === 'solution');
    expect(n).toMatchObject({
      question_id: q,
      target_type: 'solution',
      target_id: s,
      type: 'new_solution_to_your_question',
      is_read: false,
      is_seen: false,
      url: `/questions/${q}#solution-${s}`,
    });
    expect(Object.keys(n ?? {}).sort()).toEqual(
      [
        'id',
        'question_id',
        'content',
        'url',
        'icon',
        'target_id',
        'target_type',
        'type',
        'is_read',
        'is_seen',
        'user',
        'created',
        'message',
      ].sort(),
    );
    expect(n?.user).toMatchObject({ id: author.user.id, firstname: author.user.firstname, email: author.user.email });
    expect(n?.content).toContain(author.user.lastname);
    expect(n?.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // Email (default settings allow new_solution*; the author gets none).
    const mail = await waitFor(() => mailsTo(poser).at(-1), { what: 'a mail to the poser' });
    expect(mail?.raw).toMatch(/text\/plain/);
    expect(mail?.raw).toMatch(/text\/html/);
    expect(decodeHeader(mail?.raw ?? '', 'subject')).toContain('solved your question');
    expect(mailsTo(author)).toHaveLength(0);

    // Webhook: one per notification, signed.
    const hook = await waitFor(() => hooks.find((x) => JSON.parse(x.body).id === n?.id), { what: 'the webhook of the notification' });
    expect(hook.headers['x-event']).toBe('notifications');
    expect(hook.headers['x-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(hook.headers['x-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(hook.body).digest('hex')}`);
    const body = JSON.parse(hook.body);
    expect(Object.keys(body).sort()).toEqual(
      [
        'id',
        'type',
        'question_id',
        'target_id',
        'target_type',
        'target_object',
        'url',
        'icon',
        'is_read',
        'created',
        'sender',
        'receiver',
        'content',
      ].sort(),
    );
    expect(body).toMatchObject({ type: 'new_solution_to_your_question', target_type: 'solution', target_id: s, question_id: q });
    expect(body.target_object).toMatchObject({ id: s, question_id: q, author_id: author.user.id });
    expect(body.sender.id).toBe(author.user.id);
    expect(body.receiver.id).toBe(poser.user.id);
  });

  test('comments: on your question, on a followed question, on your solution, on a followed question’s solution, mentions', async () => {
    const q = await publishedQuestion(system, poser.token);
    await system.api.put(`${API}/questions/${q}/follow`).set(...follower.auth);
    const s = await publishedSolution(system, author.token, q);
    const qc = await system.api
      .post(`${API}/questions/${q}/comments`)
      .set(...other.auth)
      .send({ description: `<p>Which version? ${mention(mentioned)}</p>` });
    expect(qc.status).toBe(201);
    const sc = await system.api
      .post(`${API}/solutions/${s}/comments`)
      .set(...other.auth)
      .send({ description: '<p>Works for me</p>' });
    expect(sc.status).toBe(201);
    await settle();
    expect(await typesFor(everyone(), 'comment', qc.body.id)).toEqual({
      [poser.user.id]: ['new_comment_to_your_question'],
      [follower.user.id]: ['new_comment_to_question'],
      [mentioned.user.id]: ['mention_in_comment'],
      [author.user.id]: [],
      [other.user.id]: [],
      [admin.user.id]: [],
    });
    expect(await typesFor(everyone(), 'comment', sc.body.id)).toEqual({
      [poser.user.id]: ['new_comment_to_solution'],
      [follower.user.id]: ['new_comment_to_solution'],
      [author.user.id]: ['new_comment_to_your_solution'],
      [mentioned.user.id]: [],
      [other.user.id]: [],
      [admin.user.id]: [],
    });
    // Editing the comment does not mention the same user again.
    await system.api
      .put(`${API}/comments/${qc.body.id}`)
      .set(...other.auth)
      .send({ description: `<p>Which version exactly? ${mention(mentioned)} ${mention(admin)}</p>` });
    await settle();
    expect((await typesFor([mentioned, admin], 'comment', qc.body.id))[mentioned.user.id]).toEqual(['mention_in_comment']);
    expect((await typesFor([mentioned, admin], 'comment', qc.body.id))[admin.user.id]).toEqual(['mention_in_comment']);
  });

  test('mention in a question (poser anonymous), question edited by an admin, solution authors told of the change', async () => {
    const created = await system.api
      .post(`${API}/questions`)
      .set(...poser.auth)
      .send({ title: 'How do I rotate the signing keys?', description: `<p>Ask ${mention(mentioned)}</p>` });
    const q = created.body.id as number;
    await system.api.put(`${API}/questions/${q}/publish`).set(...poser.auth);
    await publishedSolution(system, author.token, q);
    await settle();
    const [m] = (await notificationsOf(mentioned)).filter((n) => n.target_type === 'question' && n.target_id === q);
    expect(m).toMatchObject({ type: 'mention_in_question', user: null });

    expect(
      (
        await system.api
          .put(`${API}/questions/${q}`)
          .set(...admin.auth)
          .send({ title: 'How do I rotate all signing keys?' })
      ).status,
    ).toBe(200);
    await settle();
    const types = await typesFor(everyone(), 'question', q);
    expect(types[poser.user.id]).toEqual(['question_edited']);
    expect(types[author.user.id]).toEqual(['question_changed_to_solution_author']);
    expect(types[admin.user.id]).toEqual([]);
    expect(types[other.user.id]).toEqual([]);
    const [edited] = (await notificationsOf(poser)).filter((n) => n.target_id === q && n.type === 'question_edited');
    expect(edited?.user?.id).toBe(admin.user.id);

    // The poser's own edit: solution authors are told, without naming the poser.
    await system.api
      .put(`${API}/questions/${q}`)
      .set(...poser.auth)
      .send({ title: 'How do I rotate every signing key?' });
    await settle();
    const changed = (await notificationsOf(author)).filter((n) => n.target_id === q && n.type === 'question_changed_to_solution_author');
    expect(changed).toHaveLength(2);
    expect(changed[0]?.user).toBeNull();
  });

  test('shares of questions and solutions, forwards', async () => {
    const q = await publishedQuestion(system, poser.token);
    const s = await publishedSolution(system, author.token, q);
    await settle();
    expect(
      (
        await system.api
          .post(`${API}/questions/${q}/share`)
          .set(...other.auth)
          .send({ recipients: [mentioned.user.id, other.user.id] })
      ).status,
    ).toBe(200);
    expect(
      (
        await system.api
          .post(`${API}/solutions/${s}/share`)
          .set(...other.auth)
          .send({ recipients: [follower.user.id] })
      ).status,
    ).toBe(200);
    expect(
      (
        await system.api
          .post(`${API}/questions/${q}/forward`)
          .set(...other.auth)
          .send({ recipient: admin.user.id })
      ).status,
    ).toBe(200);
    await settle();
    const qTypes = await typesFor(everyone(), 'question', q);
    expect(qTypes).toEqual({
      [mentioned.user.id]: ['share_question'],
      [admin.user.id]: ['question_forwarded'],
      [poser.user.id]: [],
      [author.user.id]: [],
      [follower.user.id]: [],
      [other.user.id]: [],
    });
    expect((await typesFor([follower], 'solution', s))[follower.user.id]).toEqual(['share_solution']);
    const [fw] = (await notificationsOf(admin)).filter((n) => n.type === 'question_forwarded' && n.target_id === q);
    expect(fw?.user?.id).toBe(other.user.id);
  });

  test('ratings (by anyone, by the poser anonymously) and edits of a solution (author, poser, raters, followers)', async () => {
    const q = await publishedQuestion(system, poser.token);
    await system.api.put(`${API}/questions/${q}/follow`).set(...follower.auth);
    const s = await publishedSolution(system, author.token, q);
    await settle();
    const before = (await typesFor([author], 'solution', s))[author.user.id]?.length ?? 0;
    expect(
      (
        await system.api
          .put(`${API}/solutions/${s}/rating`)
          .set(...other.auth)
          .send({ rating: 4 })
      ).status,
    ).toBe(200);
    expect(
      (
        await system.api
          .put(`${API}/solutions/${s}/rating`)
          .set(...poser.auth)
          .send({ rating: 5 })
      ).status,
    ).toBe(200);
    await settle();
    const rated = (await notificationsOf(author)).filter((n) => n.target_id === s && n.target_type === 'solution').slice(0, 2);
    expect(rated.map((n) => n.type)).toEqual(['solution_rated_by_question_poser', 'solution_rated']);
    expect(rated[0]?.user).toBeNull();
    expect(rated[1]?.user?.id).toBe(other.user.id);
    expect(before).toBe(0);

    expect(
      (
        await system.api
          .put(`${API}/solutions/${s}`)
          .set(...admin.auth)
          .send({ description: '<p>Use a remote cache (updated)</p>' })
      ).status,
    ).toBe(200);
    await settle();
    const latest = async (u: TestUser) => (await notificationsOf(u)).find((n) => n.target_id === s && n.target_type === 'solution')?.type;
    expect(await latest(author)).toBe('solution_edited');
    expect(await latest(poser)).toBe('solution_changed_to_question_poser');
    expect(await latest(other)).toBe('solution_changed_to_solution_rater');
    expect(await latest(follower)).toBe('solution_edited');
    expect(await latest(admin)).toBeUndefined();
  });

  test('a comment upgraded to a solution', async () => {
    const q = await publishedQuestion(system, poser.token);
    await system.api.put(`${API}/questions/${q}/follow`).set(...follower.auth);
    const c = await system.api
      .post(`${API}/questions/${q}/comments`)
      .set(...other.auth)
      .send({ description: '<p>Just clear the cache directory</p>' });
    const res = await system.api.put(`${API}/comments/${c.body.id}/to-solution`).set(...poser.auth);
    expect(res.status).toBe(200);
    await settle();
    const types = await typesFor(everyone(), 'solution', res.body.id);
    expect(types[other.user.id]).toEqual(['solution_from_comment']);
    expect(types[follower.user.id]).toEqual(['new_solution']);
    expect(types[poser.user.id]).toEqual([]);
    const [n] = (await notificationsOf(other)).filter((x) => x.type === 'solution_from_comment');
    expect(n?.user).toBeNull();
  });

  test('validation confirmed, solution expired, validation requested', async () => {
    const q = await publishedQuestion(system, poser.token);
    const s = await publishedSolution(system, author.token, q);
    expect(
      (
        await system.api
          .post(`${API}/solutions/${s}/validate`)
          .set(...admin.auth)
          .send({ validity: 'months_three' })
      ).status,
    ).toBe(200);
    await settle();
    expect((await typesFor([author, poser, admin], 'solution', s))[author.user.id]).toContain('validation_confirmation');
    await system.services.content.runtime.db
      .updateTable('solutions' as never)
      .set({ expires: new Date(Date.now() - 60_000) } as never)
      .where('id' as never, '=', s as never)
      .execute();
    await system.services.content.solutionExpiry.runOnce();
    await settle();
    expect((await notificationsOf(author)).find((n) => n.target_id === s)).toMatchObject({ type: 'solution_expired', user: null });
    expect((await system.api.put(`${API}/questions/${q}/request-validation`).set(...other.auth)).status).toBe(200);
    await settle();
    const [req] = (await notificationsOf(author)).filter((n) => n.type === 'validation_request' && n.target_id === s);
    expect(req).toMatchObject({ target_type: 'solution', question_id: q });
    expect(req?.user?.id).toBe(other.user.id);
    expect((await typesFor([other, poser], 'solution', s))[other.user.id]).toEqual([]);
  });
});

describe('who is never notified', () => {
  test('in a closed knowledge space only members; deleted users never', async () => {
    const space = await system.api
      .post(`${API}/knowledge-spaces`)
      .set(...admin.auth)
      .send({ name: `Closed ${Date.now()}`, is_closed: true });
    expect(space.status).toBe(201);
    expect(
      (
        await system.api
          .put(`${API}/knowledge-spaces/${space.body.id}/members`)
          .set(...admin.auth)
          .send({ user_ids: [poser.user.id, author.user.id, mentioned.user.id] })
      ).status,
    ).toBe(200);
    const created = await system.api
      .post(`${API}/questions`)
      .set(...poser.auth)
      .send({
        title: 'Where are the closed space keys stored?',
        description: `<p>${mention(mentioned)} and ${mention(other)}</p>`,
        knowledge_space: space.body.id,
      });
    expect(created.status).toBe(201);
    const q = created.body.id as number;
    expect((await system.api.put(`${API}/questions/${q}/publish`).set(...poser.auth)).status).toBe(200);
    await settle();
    const types = await typesFor([mentioned, other], 'question', q);
    expect(types[mentioned.user.id]).toEqual(['mention_in_question']);
    expect(types[other.user.id]).toEqual([]);

    const gone = await system.createUser();
    const open = await publishedQuestion(system, poser.token);
    await system.api.put(`${API}/questions/${open}/follow`).set(...gone.auth);
    expect((await system.api.delete(`${API}/users/${gone.user.id}`).set(...bearer(system.adminToken))).status).toBe(204);
    // Users and content events travel on separate streams: let the deletion arrive first.
    await settle();
    const s = await publishedSolution(system, author.token, open);
    await settle();
    const rows = await system.services.notifications.runtime.db
      .selectFrom('notifications')
      .select('user_id')
      .where('target_type', '=', 'solution')
      .where('target_id', '=', s)
      .execute();
    expect(rows.map((r) => r.user_id)).toEqual([poser.user.id]);
  });
});

describe('endpoints', () => {
  let reader: TestUser;
  beforeAll(async () => {
    reader = await system.createUser();
    const q = await publishedQuestion(system, reader.token);
    for (let i = 0; i < 3; i++) await publishedSolution(system, author.token, q, `<p>Solution number ${i}</p>`);
    await settle();
  });

  test('count, unseen count, list with ignore_read, limit, offset, _links', async () => {
    const auth = reader.auth;
    expect((await system.api.get(`${API}/notifications/count`).set(...auth)).body).toEqual({ notifications: 3 });
    expect((await system.api.get(`${API}/notifications/count/unseen`).set(...auth)).body).toEqual({ notifications: 3 });
    const page = await system.api.get(`${API}/notifications?limit=2&offset=1`).set(...auth);
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(3);
    expect(page.body.items).toHaveLength(2);
    expect(page.body._links.self.href).toBe('/api/v1/notifications?limit=2&offset=1');
    const all = (await system.api.get(`${API}/notifications`).set(...auth)).body.items as Array<{ id: number; created: string }>;
    expect(all.map((n) => n.id)).toEqual([...all.map((n) => n.id)].sort((a, b) => b - a));

    const first = all[0]?.id as number;
    const seen = await system.api.put(`${API}/notifications/${first}/seen`).set(...auth);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: first, is_seen: true, is_read: false });
    expect((await system.api.get(`${API}/notifications/count/unseen`).set(...auth)).body).toEqual({ notifications: 2 });
    const read = await system.api.put(`${API}/notifications/${first}/read`).set(...auth);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: first, is_read: true, is_seen: true });
    expect((await system.api.get(`${API}/notifications/count`).set(...auth)).body).toEqual({ notifications: 2 });
    const unread = await system.api.get(`${API}/notifications?ignore_read=true`).set(...auth);
    expect(unread.body.total).toBe(2);
    expect(unread.body.items.map((n: { id: number }) => n.id)).not.toContain(first);

    expect((await system.api.put(`${API}/notifications/seen`).set(...auth)).body).toEqual({ updated: 2 });
    expect((await system.api.put(`${API}/notifications`).set(...auth)).body).toEqual({ updated: 2 });
    expect((await system.api.put(`${API}/notifications`).set(...auth)).body).toEqual({ updated: 0 });
    expect((await system.api.get(`${API}/notifications/count`).set(...auth)).body).toEqual({ notifications: 0 });
  });

  test('errors: unknown id, another user’s notification, user_id without the role, negative limit; user_id with on_behalf_user', async () => {
    const mine = (await notificationsOf(reader))[0]?.id as number;
    expect((await system.api.put(`${API}/notifications/999999/read`).set(...reader.auth)).status).toBe(404);
    const foreign = await system.api.put(`${API}/notifications/${mine}/read`).set(...other.auth);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NotFound');
    expect((await system.api.put(`${API}/notifications/${mine}/seen`).set(...other.auth)).status).toBe(404);
    const denied = await system.api.get(`${API}/notifications?user_id=${reader.user.id}`).set(...other.auth);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('Forbidden');
    expect((await system.api.get(`${API}/notifications/count?user_id=${reader.user.id}`).set(...other.auth)).status).toBe(403);
    const negative = await system.api.get(`${API}/notifications?limit=-1`).set(...reader.auth);
    expect(negative.status).toBe(400);
    expect(negative.body.code).toBe('ValidationError');
    expect((await system.api.get(`${API}/notifications?ignore_read=maybe`).set(...reader.auth)).status).toBe(400);
    expect((await system.api.put(`${API}/notifications/abc/read`).set(...reader.auth)).status).toBe(400);

    const onBehalf = await system.api.get(`${API}/notifications?user_id=${reader.user.id}`).set(...technical.auth);
    expect(onBehalf.status).toBe(200);
    expect(onBehalf.body.total).toBe(3);
    expect((await system.api.get(`${API}/notifications/count/unseen?user_id=${reader.user.id}`).set(...technical.auth)).body).toEqual({
      notifications: 0,
    });
    expect((await system.api.put(`${API}/notifications/${mine}/seen?user_id=${reader.user.id}`).set(...technical.auth)).status).toBe(200);
  });

  test('the causing user’s email is disguised when anonymize_users_email is on', async () => {
    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ anonymize_users_email: true });
    await settle();
    const [n] = await notificationsOf(reader);
    expect(n?.user?.email).toBe(`${author.user.email[0]}***@example.com`);
    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ anonymize_users_email: false });
    await settle();
    expect((await notificationsOf(reader))[0]?.user?.email).toBe(author.user.email);
  });
});

describe('email', () => {
  test('per-type and email_enabled settings, the language of the user, reserved addresses, network switch', async () => {
    const german = await system.createUser({ language: 'de' });
    await system.api
      .put(`${API}/users/me/settings`)
      .set(...german.auth)
      .send({ interface_language: 'de' });
    const quiet = await system.createUser();
    await system.api
      .put(`${API}/users/me/settings/communication/email`)
      .set(...quiet.auth)
      .send({ new_solution_to_your_question: 'off' });
    const muted = await system.createUser();
    await system.api
      .put(`${API}/users/me/settings/communication/email`)
      .set(...muted.auth)
      .send({ email_enabled: false });
    const reserved = await system.createUser({ email: `imported-${Date.now()}@example.invalid` }).catch(() => undefined);
    await settle();
    const asked = [german, quiet, muted, ...(reserved ? [reserved] : [])];
    for (const u of asked) await publishedSolution(system, author.token, await publishedQuestion(system, u.token));
    await settle();
    for (const u of asked) expect((await notificationsOf(u)).length).toBeGreaterThan(0);
    await system.services.notifications.workers.email.drain();
    await waitFor(() => mailsTo(german).length > 0, { what: 'a mail in German' });
    expect(mailsTo(german)).toHaveLength(1);
    expect(decodeHeader(mailsTo(german)[0]!.raw, 'subject')).toContain('hat Ihre Frage');
    expect(mailsTo(quiet)).toHaveLength(0);
    expect(mailsTo(muted)).toHaveLength(0);
    if (reserved) expect(mailsTo(reserved)).toHaveLength(0);

    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ email_delivery_enabled: false });
    await settle();
    await publishedSolution(system, author.token, await publishedQuestion(system, german.token));
    await settle();
    await system.services.notifications.workers.email.drain();
    expect(mailsTo(german)).toHaveLength(1);
    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ email_delivery_enabled: true });
    await settle();
  });

  test('an SMTP server that refuses: retried with backoff, nothing lost, attempts recorded', async () => {
    const u = await system.createUser();
    await settle();
    smtp.refuseNext(2);
    await publishedSolution(system, author.token, await publishedQuestion(system, u.token));
    await settle();
    // The SMTP server has the message a moment before the worker records it.
    const row = await waitFor(
      async () => {
        const r = await system.services.notifications.runtime.db
          .selectFrom('email_outbox')
          .selectAll()
          .where('user_id', '=', u.user.id)
          .executeTakeFirst();
        return r?.status === 'sent' && r;
      },
      { what: 'the mail recorded as sent' },
    );
    expect(mailsTo(u)).toHaveLength(1);
    expect(row).toMatchObject({ status: 'sent', attempts: 3 });
    expect(row.last_error).toBeNull();
  });

  test('the monthly digest: one per user and month, by one instance', async () => {
    const u = await system.createUser();
    const off = await system.createUser();
    await system.api
      .put(`${API}/users/me/settings/communication/email`)
      .set(...off.auth)
      .send({ digest_email_enabled: false });
    await settle();
    for (const x of [u, off]) await publishedSolution(system, author.token, await publishedQuestion(system, x.token));
    await settle();
    await waitFor(() => mailsTo(u).length > 0, { what: 'the mail of the solution' });
    expect(mailsTo(u)).toHaveLength(1);
    const nextMonth = new Date();
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1, 15);
    const { digest, email } = system.services.notifications.workers;
    const rounds = await Promise.all([digest.runOnce(nextMonth), digest.runOnce(nextMonth)]);
    expect(rounds.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(await digest.runOnce(nextMonth)).toBe(0);
    await email.drain();
    await waitFor(() => mailsTo(u).length > 1, { what: 'the digest' });
    expect(mailsTo(u)).toHaveLength(2);
    expect(mailsTo(u)[1]?.raw).toMatch(/text\/plain/);
    expect(decodeHeader(mailsTo(u)[1]?.raw ?? '', 'subject')).toMatch(/notifications of \d{4}-\d\d/);
    expect(mailsTo(off)).toHaveLength(1);
  });
});

describe('webhooks and faults', () => {
  test('a receiver that answers 500 or is slow: retried with backoff, recorded, delivered once; deliveries for settings_admin', async () => {
    const u = await system.createUser();
    await settle();
    // Earlier deliveries are all out, so the failures below hit this test's delivery.
    const { db } = system.services.notifications.runtime;
    await waitFor(
      async () => (await db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').execute()).length === 0,
      {
        what: 'no pending deliveries',
      },
    );
    failHooks = 2;
    slowHooks = 1;
    const q = await publishedQuestion(system, u.token);
    await publishedSolution(system, author.token, q);
    await settle();
    const [n] = await notificationsOf(u);
    const delivery = await waitFor(
      async () => {
        const res = await system.api.get(`${API}/webhooks/deliveries?limit=200`).set(...bearer(system.adminToken));
        expect(res.status).toBe(200);
        const d = res.body.items.find((x: { notification_id: number }) => x.notification_id === n?.id);
        return d?.status === 'delivered' && d;
      },
      { timeoutMs: 15_000, what: 'the delivery' },
    );
    const received = hooks.filter((h) => JSON.parse(h.body).id === n?.id);
    expect(received).toHaveLength(1);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 200, last_error: null, next_attempt: null });
    expect(delivery.event_id).toBe(received[0]?.headers['x-event-id']);
    expect((await system.api.get(`${API}/webhooks/deliveries`).set(...u.auth)).status).toBe(403);
    expect((await system.api.get(`${API}/webhooks/deliveries?limit=-5`).set(...bearer(system.adminToken))).status).toBe(400);
  });

  test('an event delivered twice gives one notification', async () => {
    const u = await system.createUser();
    await settle();
    const q = await publishedQuestion(system, u.token);
    const s = await publishedSolution(system, author.token, q);
    await settle();
    const published = (await contentEvents(system, 'content.solution.published.v1')).find(
      (e) => e.data.solution.id === s,
    ) as unknown as Record<string, unknown>;
    // Published again under another message id, so JetStream's duplicate window does not drop it.
    const bus = system.services.content.runtime.bus;
    await bus.js.publish(bus.subject('content.solution.published.v1'), JSON.stringify(published), { msgID: `again-${Date.now()}` });
    await settle();
    expect((await typesFor([u], 'solution', s))[u.user.id]).toEqual(['new_solution_to_your_question']);
  });

  test('an event older than NOTIFY_MAX_EVENT_AGE_MS (a replay, a first start on a long stream) notifies nobody', async () => {
    const u = await system.createUser();
    await settle();
    const q = await publishedQuestion(system, u.token);
    const s = await publishedSolution(system, author.token, q);
    await settle();
    const published = (await contentEvents(system, 'content.solution.published.v1')).find(
      (e) => e.data.solution.id === s,
    ) as unknown as Record<string, unknown>;
    const old = { ...published, id: randomUUID(), occurred_at: new Date(Date.now() - 2 * 86_400_000).toISOString() };
    const bus = system.services.content.runtime.bus;
    await bus.js.publish(bus.subject('content.solution.published.v1'), JSON.stringify(old), { msgID: old.id });
    await settle();
    expect((await typesFor([u], 'solution', s))[u.user.id]).toEqual(['new_solution_to_your_question']);
  });

  test('switching webhooks off stops pending deliveries (recorded as failed); new notifications get none', async () => {
    const u = await system.createUser();
    await settle();
    failHooks = 1000;
    const q = await publishedQuestion(system, u.token);
    await publishedSolution(system, author.token, q);
    await settle();
    const [n] = await notificationsOf(u);
    const { db } = system.services.notifications.runtime;
    const delivery = () =>
      db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('notification_id', '=', n?.id as number)
        .executeTakeFirstOrThrow();
    await waitFor(async () => (await delivery()).attempts > 0, { what: 'a first attempt' });
    expect(
      (
        await system.api
          .put(`${API}/settings`)
          .set(...bearer(system.adminToken))
          .send({ webhook_enabled: false })
      ).status,
    ).toBe(200);
    await settle();
    await waitFor(async () => (await delivery()).status === 'failed', { what: 'the delivery given up' });
    expect(await delivery()).toMatchObject({ status: 'failed', last_error: 'webhooks disabled' });
    failHooks = 0;
    await publishedSolution(system, author.token, q);
    await settle();
    const [latest] = await notificationsOf(u);
    expect(latest?.id).not.toBe(n?.id);
    expect(
      await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('notification_id', '=', latest?.id as number)
        .execute(),
    ).toHaveLength(0);
    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ webhook_enabled: true });
    await settle();
  });

  test('a notification event is published for each notification', async () => {
    const { bus } = system.services.notifications.runtime;
    await system.services.notifications.runtime.relay.flush();
    const info = await bus.jsm.streams.info(bus.streamName('notifications'));
    const msg = await bus.jsm.streams.getMessage(bus.streamName('notifications'), { seq: info.state.last_seq });
    const envelope = msg?.json<{ subject: string; data: { notification: { id: number; user_id: number } } }>();
    expect(envelope?.subject).toBe('notifications.notification.created.v1');
    expect(envelope?.data.notification.id).toEqual(expect.any(Number));
  });
});
