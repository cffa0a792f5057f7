// The network in Microsoft Teams (docs/chat.md): Bot Framework activities with tokens signed as the
// Bot Framework signs them, checked against a local stand-in's OpenID metadata and keys; what the
// bot posts goes to the stand-in's serviceUrl.
import { json, sql } from '@kn/db';
import { forgetExpiredLinkCodes } from '../services/chat/src/domain/links.ts';
import { nextDueInMs } from '../services/chat/src/domain/outbox.ts';
import { ONLY_PERSONAL } from '../services/chat/src/domain/teams/app.ts';
import { expertOn, linksOf, routedQuestion, routedTo } from './chat-stand-in.ts';
import { API, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { personalChatOf, startTeamsStandIn, type TeamsStandIn } from './teams-stand-in.ts';

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
    TEAMS_TRUST_EMAIL_TENANTS: TENANT,
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

test('an idle outbox waits: with nothing pending, no message is due (it does not ask again at once)', async () => {
  await system.chatCaughtUp();
  expect(await nextDueInMs(system.services.chat.runtime.db)).toBeNull();
});

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
    // The count is what the publish's own call to routing got in time; the decision is the fact.
    expect(told.activity.text).toMatch(/is published and was sent to \d+ experts?\b/);
    const questionId = Number(/questions\/(\d+)/.exec(told.activity.text)![1]);
    expect(await routedTo(system, questionId)).toEqual([expert.user.id]);

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
    await system.chatCaughtUp();
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
  }, 180_000);

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
    // Whatever earlier requests still post is posted before the count.
    await system.chatCaughtUp();
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
  }, 120_000);
});

describe('forwarding, pasted links and linking by e-mail', () => {
  test('an expert forwards from the card to a colleague found among the network’s people; the colleague gets the card', async () => {
    const expert = await expertOn(system, 'oolong');
    await linkBySignIn('29:oolong-expert', expert.token);
    const colleague = await system.createUser({ firstname: 'Theodora', lastname: 'Leafield' });
    await linkBySignIn('29:oolong-colleague', colleague.token);
    const q = await routedQuestion(system, 'oolong', 'How long should an oolong steep?');
    expect(q.experts).toEqual([expert.user.id]);
    const card = posts('29:oolong-expert').find((c) => flat(c.activity.attachments).includes(`/questions/${q.id})`));
    expect(flat(card!.activity.attachments)).toContain('"action":"forward"');

    // The colleague field asks the bot as the expert types (Teams' typeahead), as that person sees the network.
    const found = await send(
      activity('29:oolong-expert', {
        type: 'invoke',
        name: 'application/search',
        value: { queryText: 'Leafie', dataset: 'kn.colleagues', queryOptions: { skip: 0, top: 15 } },
      }),
    );
    expect(found.body.type).toBe('application/vnd.microsoft.search.searchResponse');
    const choice = found.body.value.results.find((r: { value: string }) => r.value === String(colleague.user.id));
    expect(choice.title).toContain('Theodora Leafield');

    await send(
      activity('29:oolong-expert', {
        text: '',
        value: { action: 'forward', question: q.id, colleague: choice.value, note: 'You know oolong.' },
        replyToId: card!.id,
      }),
    );
    await system.chatCaughtUp();
    const forwarded = posts('29:oolong-colleague').find((c) => flat(c.activity.attachments).includes(`/questions/${q.id})`));
    expect(forwarded?.activity.text).toContain('forwarded to you');
    expect(flat(forwarded!.activity.attachments)).toContain('You know oolong.');
    expect(teams.of('personal-29:oolong-expert').filter((c) => c.method === 'update' && c.activityId === card!.id)).toHaveLength(1);
  }, 180_000);

  test('a question link pasted into a message unfurls as a card, as the person may see it; nothing for other links or someone not linked', async () => {
    const person = await system.createUser();
    await linkBySignIn('29:paster', person.token);
    const q = await routedQuestion(system, 'grinders', 'Which grinder for pour-over coffee?');
    const unfurl = (user: string, url: string) =>
      send(activity(user, { type: 'invoke', name: 'composeExtension/queryLink', value: { url } }));
    const shown = await unfurl('29:paster', `http://kn.test/questions/${q.id}?from=teams`);
    expect(shown.body.composeExtension.type).toBe('result');
    expect(shown.body.composeExtension.attachments).toHaveLength(1);
    expect(flat(shown.body.composeExtension.attachments[0])).toContain('Which grinder for pour-over coffee?');
    expect(flat(shown.body.composeExtension.attachments[0])).toContain('open · 0 solutions');
    for (const [user, url] of [
      ['29:paster', `http://kn.test.elsewhere.example/questions/${q.id}`],
      ['29:paster', 'http://kn.test/questions/999999999'],
      ['29:not-linked', `http://kn.test/questions/${q.id}`],
    ] as const)
      expect((await unfurl(user, url)).body.composeExtension.attachments).toEqual([]);
  }, 180_000);

  test('a Teams user of a trusted tenant is linked by their account’s e-mail; the address is not trusted from another tenant', async () => {
    const person = await system.createUser();
    await system.chatCaughtUp();
    teams.members.set('29:trusted', { email: person.user.email.toUpperCase(), tenantId: TENANT });
    // A guest from elsewhere in a conversation of the trusted tenant, and the same address in another tenant.
    teams.members.set('29:guest', { email: person.user.email, tenantId: 'tenant-elsewhere' });
    teams.members.set('29:foreign', { email: person.user.email, tenantId: 'tenant-elsewhere' });
    const elsewhere = { tenantId: 'tenant-elsewhere', conversationType: 'personal' };
    await send(activity('29:trusted', { text: 'search tea' }));
    await send(activity('29:guest', { text: 'search tea' }));
    await send(
      activity('29:foreign', {
        text: 'search tea',
        conversation: { id: 'personal-29:foreign', ...elsewhere },
        channelData: { tenant: { id: 'tenant-elsewhere' } },
      }),
    );
    await system.chatCaughtUp();
    expect(flat(posts('29:trusted').map((c) => c.activity))).not.toContain('/chat/link?code=');
    expect(flat(posts('29:guest').map((c) => c.activity))).toContain('/chat/link?code=');
    expect(flat(posts('29:foreign').map((c) => c.activity))).toContain('/chat/link?code=');
    const links = await system.api
      .get(`${API}/chat/links`)
      .set(...person.auth)
      .expect(200);
    expect(links.body.items.map((l: { workspace: string; chat_user_id: string }) => [l.workspace, l.chat_user_id])).toEqual([
      [TENANT, '29:trusted'],
    ]);
  }, 120_000);
});

describe('not me, and conversations other than the personal chat', () => {
  test('Not me on the expert’s card passes the question on to the next expert not asked yet', async () => {
    const first = await expertOn(system, 'origami');
    await linkBySignIn('29:origami-first', first.token);
    const q = await routedQuestion(system, 'origami', 'Which paper folds a crisp origami crane?');
    expect(q.experts).toEqual([first.user.id]);
    // An expert who came after the routing: the question was not put to them yet.
    const next = await expertOn(system, 'origami');
    await linkBySignIn('29:origami-next', next.token);
    const card = posts('29:origami-first').find((c) => flat(c.activity.attachments).includes(`/questions/${q.id})`));
    await send(activity('29:origami-first', { text: '', value: { action: 'not_me', question: q.id }, replyToId: card!.id }));
    await system.chatCaughtUp();
    expect(posts('29:origami-first').at(-1)?.activity.text).toBe(`Passed on to ${next.user.firstname} ${next.user.lastname}.`);
    const passed = posts('29:origami-next').filter((c) => flat(c.activity.attachments).includes(`/questions/${q.id})`));
    expect(passed.map((c) => c.activity.text)).toEqual([expect.stringContaining('forwarded to you')]);
    expect(teams.of('personal-29:origami-first').filter((c) => c.method === 'update' && c.activityId === card!.id)).toHaveLength(1);
  }, 180_000);

  test('in a channel the bot only points to the personal chat: no link code, no results seen with one person’s rights', async () => {
    const person = await system.createUser();
    await linkBySignIn('29:in-channel', person.token);
    const channel = (user: string, text: string) =>
      activity(user, {
        text: `<at>Knowledge Network</at> ${text}`,
        conversation: { id: 'channel-coffee', conversationType: 'channel', tenantId: TENANT },
      });
    await send(channel('29:in-channel', 'search tea'));
    await send(channel('29:channel-stranger', 'search tea'));
    await system.chatCaughtUp();
    expect(teams.of('channel-coffee').map((c) => c.activity.text)).toEqual([ONLY_PERSONAL, ONLY_PERSONAL]);
    // The compose box answers only the person: a link code there links, and the person's messages
    // still go to their personal chat, never to the channel it came from.
    const prompt = await send(
      activity('29:channel-stranger', {
        type: 'invoke',
        name: 'composeExtension/query',
        conversation: { id: 'channel-coffee', conversationType: 'channel', tenantId: TENANT },
        value: { commandId: 'searchQuestions', parameters: [{ name: 'query', value: 'tea' }] },
      }),
    );
    const code = /\/chat\/link\?code=([A-Za-z0-9_-]+)/.exec(flat(prompt.body))?.[1];
    const stranger = await system.createUser();
    await system.api
      .post(`${API}/chat/links`)
      .set(...stranger.auth)
      .send({ code })
      .expect(201);
    const link = await system.services.chat.runtime.db
      .selectFrom('links')
      .select('conversation_id')
      .where('chat_user_id', '=', '29:channel-stranger')
      .executeTakeFirstOrThrow();
    expect(link.conversation_id).toBeNull();
  });
});

describe('proactive messages to people who never wrote to the bot', () => {
  const linkOf = (user: string) =>
    system.services.chat.runtime.db
      .selectFrom('links')
      .select(['user_id', 'conversation_id'])
      .where('chat_user_id', '=', user)
      .executeTakeFirstOrThrow();
  const creates = (user: string) => teams.calls.filter((c) => c.method === 'create' && c.conversation === personalChatOf(user));
  /** A person of the trusted tenant mentions the bot in a channel: linked by their e-mail, no personal chat recorded. */
  const mentionInChannel = async (chatUser: string, email: string, channel: string, words: string) => {
    teams.members.set(chatUser, { email, tenantId: TENANT });
    await send(
      activity(chatUser, {
        text: `<at>Knowledge Network</at> search ${words}`,
        conversation: { id: channel, conversationType: 'channel', tenantId: TENANT },
      }),
    );
  };
  const cardFor = (user: string, questionId: number) =>
    posts(user).filter((c) => flat(c.activity.attachments).includes(`/questions/${questionId})`));

  test('an expert linked by their trusted e-mail in a channel gets the routed question’s card in a personal chat the bot creates', async () => {
    const expert = await expertOn(system, 'kombucha');
    await system.chatCaughtUp();
    // The expert only ever mentioned the bot in a channel: linked, with no personal chat recorded.
    await mentionInChannel('29:kombucha-expert', expert.user.email, 'channel-kombucha', 'kombucha');
    await system.chatCaughtUp();
    expect(await linkOf('29:kombucha-expert')).toEqual({ user_id: expert.user.id, conversation_id: null });

    const q = await routedQuestion(system, 'kombucha', 'How long should kombucha ferment?');
    expect(q.experts).toContain(expert.user.id);
    expect(creates('29:kombucha-expert').map((c) => [c.status, c.activity])).toEqual([
      [
        201,
        expect.objectContaining({
          isGroup: false,
          bot: expect.objectContaining({ id: `28:${APP_ID}` }),
          members: [expect.objectContaining({ id: '29:kombucha-expert' })],
          tenantId: TENANT,
        }),
      ],
    ]);
    expect(cardFor('29:kombucha-expert', q.id)).toHaveLength(1);
    // Recorded: the next message goes straight to it.
    expect((await linkOf('29:kombucha-expert')).conversation_id).toBe(personalChatOf('29:kombucha-expert'));
    const again = await routedQuestion(system, 'kombucha', 'Why is my kombucha scoby sinking?');
    expect(again.experts).toContain(expert.user.id);
    expect(cardFor('29:kombucha-expert', again.id)).toHaveLength(1);
    expect(creates('29:kombucha-expert')).toHaveLength(1);
  }, 180_000);

  test('the app installed for a person records their personal chat: the card goes there, no chat is created', async () => {
    const expert = await expertOn(system, 'sourdough');
    await system.chatCaughtUp();
    teams.members.set('29:sourdough-expert', { email: expert.user.email, tenantId: TENANT });
    // Teams tells the bot it was installed in the person's personal scope; they write nothing.
    await send(activity('29:sourdough-expert', { type: 'installationUpdate', action: 'add', text: undefined }));
    await system.chatCaughtUp();
    expect(await linkOf('29:sourdough-expert')).toEqual({
      user_id: expert.user.id,
      conversation_id: personalChatOf('29:sourdough-expert'),
    });
    // A person linked in a channel, then added the app: conversationUpdate in personal scope records it too.
    const other = await system.createUser();
    await system.chatCaughtUp();
    await mentionInChannel('29:sourdough-other', other.user.email, 'channel-bread', 'bread');
    await send(
      activity('29:sourdough-other', {
        type: 'conversationUpdate',
        text: undefined,
        membersAdded: [{ id: `28:${APP_ID}` }],
      }),
    );
    await system.chatCaughtUp();
    expect((await linkOf('29:sourdough-other')).conversation_id).toBe(personalChatOf('29:sourdough-other'));

    const q = await routedQuestion(system, 'sourdough', 'Why is my sourdough crumb so dense?');
    expect(q.experts).toContain(expert.user.id);
    expect(cardFor('29:sourdough-expert', q.id)).toHaveLength(1);
    expect(creates('29:sourdough-expert')).toHaveLength(0);
  }, 180_000);
});

describe('a link code shows whose chat account it is before it links', () => {
  /** A link code the bot offered to a Teams user who is not linked, and their name as Teams gave it. */
  const offeredCode = async (user: string, name: string) => {
    await send(activity(user, { from: { id: user, name }, text: 'search anything' }));
    await system.chatCaughtUp();
    const code = /\/chat\/link\?code=([A-Za-z0-9_-]+)/.exec(flat(posts(user).at(-1)?.activity))?.[1];
    if (!code) throw new Error(`no link offered to ${user}`);
    return code;
  };
  const preview = (token: string, code: string) =>
    system.api
      .post(`${API}/chat/links/preview`)
      .set(...bearer(token))
      .send({ code });
  const redeem = (token: string, code: string) =>
    system.api
      .post(`${API}/chat/links`)
      .set(...bearer(token))
      .send({ code });

  test('the preview names the platform, the tenant and the chat user; it links nothing and spends nothing; the link does, once', async () => {
    const code = await offeredCode('29:previewed', 'Pat Preview');
    const person = await system.createUser();
    const shown = await preview(person.token, code).expect(200);
    expect(shown.body).toEqual({
      platform: 'teams',
      workspace: TENANT,
      workspace_name: null,
      chat_user_id: '29:previewed',
      chat_user_name: 'Pat Preview',
      expires: expect.any(String),
    });
    // Not confirmed: nothing is linked, and the code still works.
    expect(await linksOf(system, person)).toEqual([]);
    await preview(person.token, code).expect(200);
    expect((await redeem(person.token, code).expect(201)).body.chat_user_id).toBe('29:previewed');
    // Spent: neither shown nor redeemed again (by anyone).
    const other = await system.createUser();
    expect((await preview(other.token, code).expect(404)).body.code).toBe('NotFound');
    await redeem(other.token, code).expect(404);
    expect(await linksOf(system, other)).toEqual([]);
  });

  test('an expired code is neither shown nor redeemed, and the clean-up forgets it', async () => {
    const code = await offeredCode('29:expired', 'Erin Expired');
    const person = await system.createUser();
    const db = system.services.chat.runtime.db;
    const [offered] = await db.selectFrom('link_codes').select('expires').where('chat_user_id', '=', '29:expired').execute();
    // Valid for CHAT_LINK_CODE_TTL_MS (30 minutes here) from the offer; then its time is up.
    expect(offered!.expires.getTime() - system.clock.now().getTime()).toBeGreaterThan(29 * 60_000);
    await db
      .updateTable('link_codes')
      .set({ expires: new Date(system.clock.now().getTime() - 1) })
      .where('chat_user_id', '=', '29:expired')
      .execute();
    await preview(person.token, code).expect(404);
    await redeem(person.token, code).expect(404);
    expect(await linksOf(system, person)).toEqual([]);
    const another = await offeredCode('29:expired-later', 'Lee Later');
    await forgetExpiredLinkCodes(db, system.clock.now());
    expect(await db.selectFrom('link_codes').select('chat_user_id').where('chat_user_id', 'like', '29:expired%').execute()).toEqual([
      { chat_user_id: '29:expired-later' },
    ]);
    await preview(person.token, another).expect(200);
  });
});

describe('a sender that crashed', () => {
  test('a message whose lease ran out is sent again by another round, once, however many rounds take part', async () => {
    const person = await system.createUser();
    await linkBySignIn('29:lease', person.token);
    const db = system.services.chat.runtime.db;
    const link = await db
      .selectFrom('links')
      .select(['installation_id', 'conversation_id'])
      .where('chat_user_id', '=', '29:lease')
      .executeTakeFirstOrThrow();
    // As a sender leaves a message it claimed and then crashed on: pending, its lease still running.
    await db
      .insertInto('messages')
      .values({
        key: 'crashed-sender:29:lease',
        installation_id: link.installation_id,
        recipient: link.conversation_id!,
        personal_of: null,
        kind: 'post',
        edits: null,
        question_id: null,
        payload: json({ text: 'Left behind by a crashed sender.' }),
        attempts: 1,
        locked_until: sql<Date>`now() + interval '1 hour'`,
        last_status_code: null,
        last_error: null,
        channel: null,
        ts: null,
        sent: null,
      })
      .execute();
    const left = () => posts('29:lease').filter((c) => c.activity.text === 'Left behind by a crashed sender.');
    await system.chatCaughtUp();
    expect(left()).toHaveLength(0);

    // The lease runs out: rounds of the outbox at once (as of several instances) send it once.
    await db
      .updateTable('messages')
      .set({ locked_until: sql<Date>`now() - interval '1 millisecond'` })
      .where('key', '=', 'crashed-sender:29:lease')
      .execute();
    const outbox = system.services.chat.outbox;
    await Promise.all([outbox.drain(), outbox.drain(), outbox.drain()]);
    await system.chatCaughtUp();
    expect(left()).toHaveLength(1);
    expect(
      await db.selectFrom('messages').select(['status', 'attempts']).where('key', '=', 'crashed-sender:29:lease').executeTakeFirstOrThrow(),
    ).toEqual({ status: 'sent', attempts: 2 });
    await outbox.drain();
    expect(left()).toHaveLength(1);
  });
});
