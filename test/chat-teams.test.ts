// The network in Microsoft Teams (docs/chat.md): Bot Framework activities with tokens signed as the
// Bot Framework signs them, checked against a local stand-in's OpenID metadata and keys; what the
// bot posts goes to the stand-in's serviceUrl.
import { API, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { startTeamsStandIn, type TeamsStandIn } from './teams-stand-in.ts';

const APP_ID = '00000000-0000-0000-0000-00000000b07';
const TENANT = 'tenant-acme';
let teams: TeamsStandIn;
let system: System;

beforeAll(async () => {
  teams = await startTeamsStandIn();
  system = await startSystem({
    TEAMS_APP_ID: APP_ID,
    TEAMS_APP_PASSWORD: 'bot-secret',
    TEAMS_OPENID_METADATA_URL: teams.openIdMetadataUrl,
    TEAMS_LOGIN_URL: teams.loginUrl,
    PUBLIC_URL: 'http://kn.test',
    CHAT_RETRY_BASE_MS: '50',
  });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await teams?.close();
});

let n = 0;
/** A message activity of a person in their personal chat with the bot. */
const activity = (user: string, fields: Record<string, unknown>) => ({
  type: 'message',
  id: `activity-${++n}`,
  channelId: 'msteams',
  serviceUrl: teams.serviceUrl,
  from: { id: user, name: user },
  recipient: { id: `28:${APP_ID}`, name: 'Knowledge Network' },
  conversation: { id: `personal-${user}`, conversationType: 'personal', tenantId: TENANT },
  channelData: { tenant: { id: TENANT } },
  ...fields,
});
/** Sends an activity with a valid token; the bot answers 200. */
const send = async (body: Record<string, unknown>) => {
  const res = await system.api
    .post('/integrations/teams/messages')
    .set('content-type', 'application/json')
    .set('authorization', `Bearer ${await teams.token(APP_ID, teams.serviceUrl)}`)
    .send(JSON.stringify(body));
  expect(res.status).toBe(200);
  return res;
};
const flat = (v: unknown) => JSON.stringify(v) ?? '';
const posts = (user: string) => teams.of(`personal-${user}`).filter((c) => c.method === 'send' && c.status === 200);

async function linkBySignIn(user: string, token: string) {
  await send(activity(user, { text: 'search anything' }));
  await system.chatCaughtUp();
  const code = /\/chat\/link\?code=([A-Za-z0-9_-]+)/.exec(flat(posts(user).at(-1)?.activity))?.[1];
  if (!code) throw new Error(`no link offered to ${user}`);
  await system.api
    .post(`${API}/chat/links`)
    .set(...bearer(token))
    .send({ code })
    .expect(201);
}

describe('a question from Teams, end to end', () => {
  test('asked, routed, answered from the expert’s card, accepted by the asker; search from the compose box', async () => {
    const asker = await system.createUser();
    const expert = await system.createUser();
    const other = await system.createUser();
    const earlier = await system.api
      .post(`${API}/questions`)
      .set(...other.auth)
      .send({ title: 'How do I temper chocolate?', description: '<p>tempering chocolate</p>', tags: ['chocolate'] })
      .expect(201);
    await system.api
      .put(`${API}/questions/${earlier.body.id}/publish`)
      .set(...other.auth)
      .expect(200);
    await publishedSolution(system, expert.token, earlier.body.id, '<p>Seed the chocolate at 27 °C, then warm it to 31 °C.</p>');
    await system.searchCaughtUp();
    await linkBySignIn('29:asker', asker.token);
    await linkBySignIn('29:expert', expert.token);

    const text = 'Why does my chocolate bloom after tempering?';
    await send(activity('29:asker', { text: `ask ${text}` }));
    await system.chatCaughtUp();
    const similar = posts('29:asker').at(-1)!;
    expect(flat(similar.activity.attachments)).toContain(`/questions/${earlier.body.id}`);
    expect(flat(similar.activity.attachments)).toContain('"action":"ask_network"');

    await send(activity('29:asker', { text: '', value: { action: 'ask_network', text }, replyToId: similar.id }));
    await system.chatCaughtUp();
    const told = posts('29:asker').at(-1)!;
    expect(told.activity.text).toMatch(/sent to 1 expert\b/);
    const questionId = Number(/questions\/(\d+)/.exec(told.activity.text)![1]);

    const card = posts('29:expert').find((c) => flat(c.activity.attachments).includes(`/questions/${questionId})`));
    expect(flat(card!.activity.attachments)).toContain('"action":"not_me"');
    await send(
      activity('29:expert', {
        text: '',
        value: { action: 'answer', question: questionId, solution: 'Keep it below 32 °C.' },
        replyToId: card!.id,
      }),
    );
    await system.chatCaughtUp();
    const complete = await system.api
      .get(`${API}/questions/${questionId}/complete`)
      .set(...asker.auth)
      .expect(200);
    const solution = complete.body.solutions.find((s: { user: string }) => s.user === `/api/v1/users/${expert.user.id}`);
    expect(solution).toBeDefined();
    // The expert's card is edited in place.
    expect(teams.of('personal-29:expert').filter((c) => c.method === 'update' && c.activityId === card!.id)).toHaveLength(1);

    const offered = posts('29:asker').find((c) => flat(c.activity.attachments).includes('"action":"accept"'));
    expect(flat(offered!.activity.attachments)).toContain(`"solution":${solution.id}`);
    await send(activity('29:asker', { text: '', value: { action: 'accept', solution: solution.id }, replyToId: offered!.id }));
    const accepted = await system.api
      .get(`${API}/solutions/${solution.id}`)
      .set(...asker.auth)
      .expect(200);
    expect(accepted.body.accepted_by_question_poser).not.toBeNull();

    // The message extension searches the network as the linked person, answered at once.
    const search = await send(
      activity('29:asker', {
        type: 'invoke',
        name: 'composeExtension/query',
        value: { commandId: 'searchQuestions', parameters: [{ name: 'query', value: 'chocolate' }] },
      }),
    );
    expect(search.body.composeExtension.type).toBe('result');
    expect(flat(search.body.composeExtension.attachments)).toContain('temper chocolate');
  }, 60_000);

  test('a person who is not linked is asked to link, and nothing is done in anyone’s name', async () => {
    const before = (
      await system.api
        .get(`${API}/questions?limit=1`)
        .set(...bearer(system.adminToken))
        .expect(200)
    ).body.total;
    await send(activity('29:stranger', { text: '', value: { action: 'ask_network', text: 'Who am I?' } }));
    await system.chatCaughtUp();
    expect(posts('29:stranger').map((c) => flat(c.activity))).toEqual([expect.stringContaining('/chat/link?code=')]);
    expect(
      (
        await system.api
          .get(`${API}/questions?limit=1`)
          .set(...bearer(system.adminToken))
          .expect(200)
      ).body.total,
    ).toBe(before);
  });
});

describe('tokens that are not the Bot Framework’s for this bot', () => {
  const refused = async (token: string | null, body = activity('29:forger', { text: 'search anything' })) => {
    const calls = teams.calls.length;
    const req = system.api.post('/integrations/teams/messages').set('content-type', 'application/json');
    const res = await (token === null ? req : req.set('authorization', `Bearer ${token}`)).send(JSON.stringify(body));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
    await system.chatCaughtUp();
    // Not even the link offer went out.
    expect(teams.calls.length).toBe(calls);
  };

  test('another audience is 401', async () => refused(await teams.token('another-bot', teams.serviceUrl, { audience: 'another-bot' })));
  test('another issuer is 401', async () => refused(await teams.token(APP_ID, teams.serviceUrl, { issuer: 'https://issuer.invalid' })));
  test('a key the metadata does not list is 401', async () => refused(await teams.token(APP_ID, teams.serviceUrl, { key: 'unknown-kid' })));
  test('a listed key id with another key’s signature is 401', async () =>
    refused(await teams.token(APP_ID, teams.serviceUrl, { key: 'other' })));
  test('a token for another serviceUrl is 401', async () => refused(await teams.token(APP_ID, 'https://smba.evil.example/')));
  test('no token is 401', async () => refused(null));
});

describe('when Teams is busy', () => {
  afterEach(() => teams.failWhen(null));

  test('a 429 and a 503 are retried after their Retry-After; the card is posted once', async () => {
    const person = await system.createUser();
    await linkBySignIn('29:busy', person.token);
    let attempts = 0;
    teams.failWhen((call) => {
      if (call.conversation !== 'personal-29:busy' || call.method !== 'send') return null;
      attempts++;
      return attempts === 1 ? { status: 429, retryAfter: 1 } : attempts === 2 ? { status: 503, retryAfter: 0 } : null;
    });
    await send(activity('29:busy', { text: 'search anything at all' }));
    await system.chatCaughtUp();
    await teams.until(() => posts('29:busy').length >= 2);
    const tries = teams.of('personal-29:busy').slice(-3);
    expect(tries.map((c) => c.status)).toEqual([429, 503, 200]);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(990);
    await system.chatCaughtUp();
    expect(teams.of('personal-29:busy').filter((c) => c.status === 200)).toHaveLength(2);
  }, 30_000);
});
