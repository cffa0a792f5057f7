// The network in Slack (docs/chat.md): requests signed as Slack signs them, through the gateway,
// to the chat service; what it posts goes to a local stand-in of Slack's Web API.
import { expertOn, linksOf, routedQuestion, routedTo } from './chat-stand-in.ts';
import { API, publishedSolution } from './fixtures.ts';
import { interaction, type SlackStandIn, slackSignature, slashCommand, startSlackStandIn } from './slack-stand-in.ts';
import { bearer, type System, startSystem } from './system.ts';

const SECRET = 'slack-signing-secret-of-the-tests';
const TEAM = 'T0ACME';
const PUBLIC_URL = 'http://kn.test';

let slack: SlackStandIn;
let system: System;

beforeAll(async () => {
  slack = await startSlackStandIn();
  system = await startSystem({
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_BOT_TOKEN: 'xoxb-tests',
    SLACK_API_URL: slack.url,
    SLACK_TRUST_EMAIL: 'true',
    PUBLIC_URL,
    CHAT_RETRY_BASE_MS: '50',
  });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await slack?.close();
});

const now = () => Math.floor(system.clock.now().getTime() / 1000);
/** Posts to Slack's request URL, signed with the app's secret unless other headers are given. */
const post = (
  body: string,
  contentType = 'application/x-www-form-urlencoded',
  headers: Record<string, string> = slackSignature(SECRET, body, now()),
) => system.api.post('/integrations/slack/events').set('content-type', contentType).set(headers).send(body);
const command = (user: string, command: string, text: string) => post(slashCommand({ command, text, team_id: TEAM, user_id: user }));
const press = (user: string, actionId: string, value: string, extra: Record<string, unknown> = {}) =>
  post(
    interaction({
      type: 'block_actions',
      team: { id: TEAM, domain: 'acme' },
      user: { id: user },
      trigger_id: `trigger-${actionId}-${Math.random()}`,
      actions: [{ type: 'button', action_id: actionId, block_id: 'b', value, action_ts: String(now()) }],
      ...extra,
    }),
  );
const questionCount = async () =>
  (
    await system.api
      .get(`${API}/questions?limit=1`)
      .set(...bearer(system.adminToken))
      .expect(200)
  ).body.total as number;
/** The blocks of a message as one text, to find a link or button in. */
const flat = (v: unknown) => JSON.stringify(v);

/** Links a Slack user by the link the app gives them: their first command, then the web app's sign-in. */
async function linkBySignIn(slackUser: string, token: string) {
  const prompt = await command(slackUser, '/kn', 'search anything').expect(200);
  const code = /\/chat\/link\?code=([A-Za-z0-9_-]+)/.exec(flat(prompt.body))?.[1];
  if (!code) throw new Error(`no link offered: ${flat(prompt.body)}`);
  await system.api
    .post(`${API}/chat/links`)
    .set(...bearer(token))
    .send({ code })
    .expect(201);
  // The chat service acts for a linked person once its projection of the users has them: on a
  // loaded machine the new user's event may still be on its way.
  await system.chatCaughtUp();
  return code;
}

describe('linking', () => {
  test('an unlinked Slack user is asked to link, and nothing is asked in anyone’s name', async () => {
    const before = await questionCount();
    const callsBefore = slack.calls.length;
    const res = await command('U0STRANGER', '/ask', 'Who runs the coffee machine?').expect(200);
    expect(res.body.response_type).toBe('ephemeral');
    expect(flat(res.body)).toContain(`${PUBLIC_URL}/chat/link?code=`);
    // A button of someone else's message, pressed by the stranger: nothing either.
    await press('U0STRANGER', 'ask_network', 'Who runs the coffee machine?').expect(200);
    await system.chatCaughtUp();
    expect(await questionCount()).toBe(before);
    // The only thing posted is the link offer, to the stranger alone.
    const posted = slack.calls.slice(callsBefore).filter((c) => c.method.startsWith('chat.'));
    expect(posted.map((c) => [c.method, c.args.channel ?? c.args.user])).toEqual([['chat.postMessage', 'U0STRANGER']]);
    expect(flat(posted[0]!.args.blocks)).toContain('/chat/link?code=');
  });

  test('before linking, the web app is shown whose Slack account the code is: the workspace and the person, as Slack named them', async () => {
    const prompt = await command('U0PREVIEW', '/kn', 'search anything').expect(200);
    const code = /\/chat\/link\?code=([A-Za-z0-9_-]+)/.exec(flat(prompt.body))?.[1];
    const person = await system.createUser();
    const shown = await system.api
      .post(`${API}/chat/links/preview`)
      .set(...person.auth)
      .send({ code })
      .expect(200);
    expect(shown.body).toEqual(
      expect.objectContaining({
        platform: 'slack',
        workspace: TEAM,
        workspace_name: 'acme',
        chat_user_id: 'U0PREVIEW',
        chat_user_name: 'u0preview',
      }),
    );
    expect(await linksOf(system, person)).toEqual([]);
  });

  test('the link code links once, to the signed-in user; a used or unknown code is 404', async () => {
    const person = await system.createUser();
    const code = await linkBySignIn('U0LINKER', person.token);
    const links = await system.api
      .get(`${API}/chat/links`)
      .set(...person.auth)
      .expect(200);
    expect(links.body.items).toEqual([expect.objectContaining({ platform: 'slack', workspace: TEAM, chat_user_id: 'U0LINKER' })]);
    const other = await system.createUser();
    const again = await system.api
      .post(`${API}/chat/links`)
      .set(...other.auth)
      .send({ code })
      .expect(404);
    expect(again.body.code).toBe('NotFound');
    expect(
      (
        await system.api
          .get(`${API}/chat/links`)
          .set(...other.auth)
          .expect(200)
      ).body.total,
    ).toBe(0);
  });

  test('a Slack user whose e-mail Slack confirmed is linked at once; an unconfirmed address is not trusted', async () => {
    const person = await system.createUser();
    await system.chatCaughtUp();
    slack.profiles.set('U0CONFIRMED', { email: person.user.email.toUpperCase(), confirmed: true });
    slack.profiles.set('U0UNCONFIRMED', { email: person.user.email, confirmed: false });
    const confirmed = await command('U0CONFIRMED', '/kn', 'search coffee').expect(200);
    expect(flat(confirmed.body)).not.toContain('/chat/link?code=');
    const unconfirmed = await command('U0UNCONFIRMED', '/kn', 'search coffee').expect(200);
    expect(flat(unconfirmed.body)).toContain('/chat/link?code=');
    const links = await system.api
      .get(`${API}/chat/links`)
      .set(...person.auth)
      .expect(200);
    expect(links.body.items.map((l: { chat_user_id: string }) => l.chat_user_id)).toEqual(['U0CONFIRMED']);
  });
});

describe('a question from Slack, end to end', () => {
  test('asked with /ask, routed, answered from the expert’s direct message, accepted by the asker', async () => {
    const asker = await system.createUser();
    const expert = await system.createUser();
    const other = await system.createUser();
    // The expert knows espresso: a published solution on an espresso question.
    const earlier = await system.api
      .post(`${API}/questions`)
      .set(...other.auth)
      .send({ title: 'Why is my espresso sour?', description: '<p>sour espresso shots</p>', tags: ['espresso'] })
      .expect(201);
    await system.api
      .put(`${API}/questions/${earlier.body.id}/publish`)
      .set(...other.auth)
      .expect(200);
    await publishedSolution(system, expert.token, earlier.body.id, '<p>Grind finer and pull longer espresso shots.</p>');
    await system.searchCaughtUp();
    await linkBySignIn('U0ASKER', asker.token);
    await linkBySignIn('U0EXPERT', expert.token);

    // /ask shows the similar questions first, only to the asker, with the button that asks.
    const text = 'How should I grind espresso beans for a sour espresso?';
    const similar = await command('U0ASKER', '/ask', text).expect(200);
    expect(similar.body.response_type).toBe('ephemeral');
    expect(flat(similar.body.blocks)).toContain(`${PUBLIC_URL}/questions/${earlier.body.id}`);
    expect(flat(similar.body.blocks)).toContain('"action_id":"ask_network"');

    await press('U0ASKER', 'ask_network', text, { channel: { id: 'C0GENERAL' }, container: { message_ts: '1.0001' } }).expect(200);
    await system.chatCaughtUp();
    const told = slack.of('chat.postEphemeral').find((c) => c.args.user === 'U0ASKER');
    // The count is what the publish's own call to routing got in time; the decision is the fact.
    expect(told?.args.text).toMatch(/is published and was sent to \d+ experts?\b/);
    const questionId = Number(/questions\/(\d+)/.exec(told!.args.text)![1]);
    expect(await routedTo(system, questionId)).toEqual([expert.user.id]);
    const question = await system.api
      .get(`${API}/questions/${questionId}`)
      .set(...asker.auth)
      .expect(200);
    expect(question.body.title).toBe(text);
    // A second press of the same button asks nothing twice.
    await press('U0ASKER', 'ask_network', text, { channel: { id: 'C0GENERAL' }, container: { message_ts: '1.0001' } }).expect(200);
    await system.chatCaughtUp();
    expect(
      (
        await system.api
          .get(`${API}/questions?query=grind&limit=50`)
          .set(...asker.auth)
          .expect(200)
      ).body.items.filter((q: { title: string }) => q.title === text),
    ).toHaveLength(1);

    // The expert's direct message: the question with answer / not me / forward.
    const dm = slack
      .of('chat.postMessage')
      .find((c) => c.args.channel === 'U0EXPERT' && flat(c.args.blocks).includes(`/questions/${questionId}|`));
    expect(dm).toBeDefined();
    expect(flat(dm!.args.blocks)).toEqual(expect.stringContaining('"action_id":"not_me"'));

    // Answer: the modal opens, its submission posts the solution as the expert.
    await press('U0EXPERT', 'answer', String(questionId)).expect(200);
    await system.chatCaughtUp();
    const opened = slack.of('views.open').at(-1)!;
    expect(opened.args.view.callback_id).toBe('answer_modal');
    await post(
      interaction({
        type: 'view_submission',
        team: { id: TEAM },
        user: { id: 'U0EXPERT' },
        view: {
          id: 'V1',
          callback_id: 'answer_modal',
          private_metadata: String(questionId),
          blocks: [],
          state: { values: { solution: { text: { type: 'plain_text_input', value: 'Grind finer, about 18 g in 36 g out.' } } } },
        },
      }),
    ).expect(200);
    const complete = await system.api
      .get(`${API}/questions/${questionId}/complete`)
      .set(...asker.auth)
      .expect(200);
    const solution = complete.body.solutions.find((s: { user: string }) => s.user === `/api/v1/users/${expert.user.id}`);
    expect(solution).toBeDefined();

    // The asker gets the new solution with an accept button; accepting it from Slack accepts it.
    await system.chatCaughtUp();
    const offered = slack
      .of('chat.postMessage')
      .find((c) => c.args.channel === 'U0ASKER' && flat(c.args.blocks).includes('"action_id":"accept"'));
    expect(flat(offered!.args.blocks)).toContain(`"value":"${solution.id}"`);
    const where = offered!.answer as { channel: string; ts: string };
    await press('U0ASKER', 'accept', String(solution.id), { channel: { id: where.channel }, message: { ts: where.ts } }).expect(200);
    await system.chatCaughtUp();
    const accepted = await system.api
      .get(`${API}/solutions/${solution.id}`)
      .set(...asker.auth)
      .expect(200);
    expect(accepted.body.accepted_by_question_poser).not.toBeNull();
    // The expert's direct message now says it was answered (the same message, edited).
    await system.chatCaughtUp();
    const edits = slack.of('chat.update').filter((c) => c.args.channel === 'D0EXPERT');
    expect(edits.at(-1)?.args.text).toContain('you answered it');
    expect(edits.at(-1)?.args.ts).toBe((dm!.answer as { ts: string }).ts);
    const thanked = slack.of('chat.update').filter((c) => c.args.channel === where.channel && c.args.ts === where.ts);
    expect(thanked.map((c) => c.args.text)).toEqual(['You accepted this solution. Thank you!']);
  }, 180_000);
});

describe('requests that are not Slack’s', () => {
  const body = () => slashCommand({ command: '/ask', text: 'Is this request Slack’s?', team_id: TEAM, user_id: 'U0FORGER' });
  const refusedWithNothingDone = async (send: () => Promise<{ status: number; body: { code?: string } }>) => {
    // Whatever earlier requests still post is posted before the count.
    await system.chatCaughtUp();
    const calls = slack.calls.length;
    const res = await send();
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
    await system.chatCaughtUp();
    // Not even the link offer: the request was never looked at.
    expect(slack.calls.length).toBe(calls);
  };

  test('a signature made with another secret is 401', async () => {
    const b = body();
    await refusedWithNothingDone(() => post(b, undefined, slackSignature('not-the-secret', b, now())));
  });

  test('a body changed after signing is 401', async () => {
    const b = body();
    const signed = slackSignature(SECRET, b, now());
    await refusedWithNothingDone(() => post(b.replace('Slack', 'Slock'), undefined, signed));
  });

  test('a request older than five minutes, or from more than five minutes ahead, is 401', async () => {
    const b = body();
    // The app reads its clock a moment after the test: a timestamp ahead gets nearer meanwhile, one
    // behind only older, so the one ahead keeps a margin a loaded machine cannot eat up.
    await refusedWithNothingDone(() => post(b, undefined, slackSignature(SECRET, b, now() - 301)));
    await refusedWithNothingDone(() => post(b, undefined, slackSignature(SECRET, b, now() + 360)));
    // Within the window it is served.
    await post(b, undefined, slackSignature(SECRET, b, now() - 240)).expect(200);
  });

  test('a replayed request is 401 and does nothing a second time', async () => {
    const asker = await system.createUser();
    await linkBySignIn('U0REPLAY', asker.token);
    const press = interaction({
      type: 'block_actions',
      team: { id: TEAM },
      user: { id: 'U0REPLAY' },
      trigger_id: 'trigger-replay',
      channel: { id: 'C0GENERAL' },
      // No message: each press stands for itself, only the replay guard keeps it from asking twice.
      actions: [{ type: 'button', action_id: 'ask_network', block_id: 'b', value: 'Does a replay ask twice?', action_ts: '1' }],
    });
    const headers = slackSignature(SECRET, press, now());
    const before = await questionCount();
    await post(press, undefined, headers).expect(200);
    await system.chatCaughtUp();
    await refusedWithNothingDone(() => post(press, undefined, headers));
    expect(await questionCount()).toBe(before + 1);
  });

  test('without the signature headers, or with a signing secret unset, 401', async () => {
    const b = body();
    await refusedWithNothingDone(() => post(b, undefined, {}));
  });
});

/** An expert on `tag` who is linked to `slackUser`. */
async function linkedExpert(tag: string, slackUser: string) {
  const expert = await expertOn(system, tag);
  await linkBySignIn(slackUser, expert.token);
  return expert;
}

const directMessages = (slackUser: string, questionId: number) =>
  slack.of('chat.postMessage').filter((c) => c.args.channel === slackUser && flat(c.args.blocks).includes(`/questions/${questionId}|`));

describe('when Slack is busy', () => {
  afterEach(() => slack.failWhen(null));

  test('a 429 and a 503 are retried, after the Retry-After Slack asked for; the message is posted once', async () => {
    const expert = await linkedExpert('kombucha', 'U0BUSY');
    let attempts = 0;
    slack.failWhen((method, args) => {
      if (method !== 'chat.postMessage' || args.channel !== 'U0BUSY') return null;
      attempts++;
      return attempts === 1 ? { status: 429, retryAfter: 1 } : attempts === 2 ? { status: 503 } : null;
    });
    const q = await routedQuestion(system, 'kombucha', 'Why does my kombucha taste of vinegar?');
    expect(q.experts).toEqual([expert.user.id]);
    await slack.until(() => directMessages('U0BUSY', q.id).some((c) => c.status === 200));
    const tries = directMessages('U0BUSY', q.id);
    expect(tries.map((c) => c.status)).toEqual([429, 503, 200]);
    // Not before the second Slack asked to wait (a little slack for the timers' granularity).
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(990);
    // Nothing further comes of it: every due message is sent, none twice.
    await system.chatCaughtUp();
    expect(directMessages('U0BUSY', q.id).filter((c) => c.status === 200)).toHaveLength(1);
  }, 120_000);

  test('a message Slack refuses for good is kept as failed, not retried', async () => {
    await linkedExpert('sourdough', 'U0REFUSED');
    slack.failWhen((method, args) => (method === 'chat.postMessage' && args.channel === 'U0REFUSED' ? { status: 400 } : null));
    const q = await routedQuestion(system, 'sourdough', 'Why does my sourdough not rise?');
    await slack.until(() => directMessages('U0REFUSED', q.id).length > 0);
    await system.chatCaughtUp();
    expect(directMessages('U0REFUSED', q.id).map((c) => c.status)).toEqual([400]);
  });
});

describe('forwarding to a colleague', () => {
  test('the colleague is any network person, found by name as the expert sees them, and told as of any forward though not in Slack', async () => {
    const expert = await linkedExpert('cider', 'U0FORWARDER');
    const colleague = await system.createUser({ firstname: 'Cordelia', lastname: 'Pressmann' });
    const q = await routedQuestion(system, 'cider', 'How long should cider ferment?');
    expect(q.experts).toEqual([expert.user.id]);
    expect(directMessages('U0FORWARDER', q.id)).toHaveLength(1);

    await press('U0FORWARDER', 'forward', String(q.id)).expect(200);
    await system.chatCaughtUp();
    const opened = slack.of('views.open').at(-1)!;
    expect(opened.args.view.callback_id).toBe('forward_modal');
    // The colleague field asks the app as the expert types: the network's people, not Slack's.
    const suggested = await post(
      interaction({
        type: 'block_suggestion',
        team: { id: TEAM },
        user: { id: 'U0FORWARDER' },
        api_app_id: 'A0KN',
        action_id: 'colleague',
        block_id: 'recipient',
        value: 'Pressma',
        view: { id: 'V2', callback_id: 'forward_modal', private_metadata: String(q.id) },
      }),
    ).expect(200);
    const option = suggested.body.options.find((o: { value: string }) => o.value === String(colleague.user.id));
    expect(option.text.text).toContain('Cordelia Pressmann');

    await post(
      interaction({
        type: 'view_submission',
        team: { id: TEAM },
        user: { id: 'U0FORWARDER' },
        view: {
          id: 'V2',
          callback_id: 'forward_modal',
          private_metadata: String(q.id),
          blocks: [],
          state: {
            values: {
              recipient: { colleague: { type: 'external_select', selected_option: option } },
              message: { text: { type: 'plain_text_input', value: 'You make cider, right?' } },
            },
          },
        },
      }),
    ).expect(200);
    await system.chatCaughtUp();
    await system.services.notifications.consumers.content.caughtUp();
    const told = await system.api
      .get(`${API}/notifications?limit=100`)
      .set(...colleague.auth)
      .expect(200);
    expect(
      told.body.items.filter((n: { type: string; question_id: number }) => n.type === 'question_forwarded' && n.question_id === q.id),
    ).toHaveLength(1);
  }, 180_000);

  test('a submission without a colleague from the list is refused in the dialog, and nothing is forwarded', async () => {
    await linkBySignIn('U0NOBODY', (await system.createUser()).token);
    const res = await post(
      interaction({
        type: 'view_submission',
        team: { id: TEAM },
        user: { id: 'U0NOBODY' },
        view: { id: 'V3', callback_id: 'forward_modal', private_metadata: '1', blocks: [], state: { values: { recipient: {} } } },
      }),
    ).expect(200);
    expect(res.body).toEqual({ response_action: 'errors', errors: { recipient: 'Choose a colleague from the list.' } });
  });
});

describe('where notifications go', () => {
  test('each type: email, chat, both or none, the email half in the email settings', async () => {
    const person = await system.createUser();
    const channels = `${API}/users/me/settings/communication/channels`;
    const initial = await system.api
      .get(channels)
      .set(...person.auth)
      .expect(200);
    expect(initial.body).toMatchObject({ new_question: 'both', new_solution_to_your_question: 'both' });
    const changed = await system.api
      .put(channels)
      .set(...person.auth)
      .send({ new_question: 'email', share_question: 'none', question_forwarded: 'chat' })
      .expect(200);
    expect(changed.body).toMatchObject({
      new_question: 'email',
      share_question: 'none',
      question_forwarded: 'chat',
      new_solution_to_your_question: 'both',
    });
    const email = await system.api
      .get(`${API}/users/me/settings/communication/email`)
      .set(...person.auth)
      .expect(200);
    expect(email.body).toMatchObject({ new_question: 'on', share_question: 'off', question_forwarded: 'off' });
    expect(
      (
        await system.api
          .get(channels)
          .set(...person.auth)
          .expect(200)
      ).body,
    ).toEqual(changed.body);
  });

  test('a choice that is not one of the four is 400, and nothing changes', async () => {
    const person = await system.createUser();
    const channels = `${API}/users/me/settings/communication/channels`;
    const res = await system.api
      .put(channels)
      .set(...person.auth)
      .send({ new_question: 'email', share_question: 'pigeon' })
      .expect(400);
    expect(res.body.code).toBe('ValidationError');
    expect(
      (
        await system.api
          .get(channels)
          .set(...person.auth)
          .expect(200)
      ).body.new_question,
    ).toBe('both');
  });

  test('an expert who chose email only for new questions gets no direct message', async () => {
    const expert = await linkedExpert('matcha', 'U0EMAILONLY');
    await system.api
      .put(`${API}/users/me/settings/communication/channels`)
      .set(...expert.auth)
      .send({ new_question: 'email' })
      .expect(200);
    const q = await routedQuestion(system, 'matcha', 'How hot should the water for matcha be?');
    expect(q.experts).toEqual([expert.user.id]);
    expect(directMessages('U0EMAILONLY', q.id)).toHaveLength(0);
  });
});

describe('the other ways in: the shortcut, search, not me and unfurls', () => {
  test('the message shortcut asks a message as a question, with a link back to its Slack thread', async () => {
    const person = await system.createUser();
    await linkBySignIn('U0SHORTCUT', person.token);
    const text = 'Which descaler is safe for a brass boiler?';
    await post(
      interaction({
        type: 'message_action',
        callback_id: 'ask_network',
        team: { id: TEAM, domain: 'acme' },
        user: { id: 'U0SHORTCUT' },
        channel: { id: 'C0KITCHEN' },
        message: { type: 'message', text, ts: '1700000123.000400' },
        trigger_id: 'trigger-shortcut',
        message_ts: '1700000123.000400',
        response_url: 'https://hooks.slack.invalid/actions/1',
      }),
    ).expect(200);
    await system.chatCaughtUp();
    const told = slack.of('chat.postEphemeral').find((c) => c.args.user === 'U0SHORTCUT' && c.args.channel === 'C0KITCHEN');
    expect(told?.args.text).toMatch(/is published and was sent to \d+ experts?\b/);
    const questionId = Number(/questions\/(\d+)/.exec(told!.args.text)![1]);
    const question = await system.api
      .get(`${API}/questions/${questionId}`)
      .set(...person.auth)
      .expect(200);
    expect(question.body.title).toBe(text);
    expect(question.body.description).toContain('https://acme.slack.com/archives/C0KITCHEN/p1700000123000400');
  });

  test('/kn search answers, only to the caller, the questions it finds, with links', async () => {
    const person = await system.createUser();
    const q = await routedQuestion(system, 'percolator', 'Does a percolator boil the coffee?');
    await system.searchCaughtUp();
    await linkBySignIn('U0SEARCHER', person.token);
    const found = await command('U0SEARCHER', '/kn', 'search percolator').expect(200);
    expect(found.body.response_type).toBe('ephemeral');
    expect(flat(found.body.blocks)).toContain(`${PUBLIC_URL}/questions/${q.id}|`);
  });

  test('Not me passes the question on to the next expert not asked yet; the direct message says so', async () => {
    const first = await linkedExpert('bagpipes', 'U0NOTME');
    const q = await routedQuestion(system, 'bagpipes', 'How often should bagpipe reeds be replaced?');
    expect(q.experts).toEqual([first.user.id]);
    // An expert who came after the routing: the question was not put to them yet.
    const next = await linkedExpert('bagpipes', 'U0NEXT');
    const dm = directMessages('U0NOTME', q.id)[0]!;
    const where = dm.answer as { channel: string; ts: string };
    await press('U0NOTME', 'not_me', String(q.id), { channel: { id: where.channel }, message: { ts: where.ts } }).expect(200);
    await system.chatCaughtUp();
    expect(await routedTo(system, q.id)).toEqual([first.user.id]);
    expect(directMessages('U0NEXT', q.id)).toHaveLength(1);
    expect(flat(directMessages('U0NEXT', q.id)[0]!.args.blocks)).toContain('forwarded to you');
    const edits = slack.of('chat.update').filter((c) => c.args.channel === where.channel && c.args.ts === where.ts);
    expect(edits.map((c) => c.args.text)).toEqual([expect.stringContaining(`passed on to ${next.user.firstname} ${next.user.lastname}`)]);
  }, 120_000);

  test('a question’s link posted in a channel unfurls as the poster may see it; nothing for other links or someone not linked', async () => {
    const person = await system.createUser();
    await linkBySignIn('U0POSTER', person.token);
    const q = await routedQuestion(system, 'moka', 'Why does my moka pot sputter?');
    const shared = (user: string, eventId: string, links: string[]) =>
      post(
        JSON.stringify({
          type: 'event_callback',
          team_id: TEAM,
          api_app_id: 'A0KN',
          event_id: eventId,
          event_time: now(),
          event: {
            type: 'link_shared',
            user,
            channel: 'C0GENERAL',
            message_ts: `${now()}.000500`,
            links: links.map((url) => ({ url, domain: new URL(url).hostname })),
          },
        }),
        'application/json',
      ).expect(200);
    const ours = `${PUBLIC_URL}/questions/${q.id}`;
    await system.chatCaughtUp();
    const before = slack.of('chat.unfurl').length;
    await shared('U0POSTER', 'Ev0UNFURL1', [ours, 'http://kn.test.elsewhere.example/questions/1', `${PUBLIC_URL}/questions/999999999`]);
    await shared('U0STRANGER2', 'Ev0UNFURL2', [ours]);
    await system.chatCaughtUp();
    const unfurls = slack.of('chat.unfurl').slice(before);
    expect(unfurls).toHaveLength(1);
    expect(unfurls[0]!.args.unfurls).toEqual({ [ours]: { title: 'Why does my moka pot sputter?', text: 'open · 0 solutions' } });
  });
});

test('a question shared with a linked person reaches them in Slack, unless they chose e-mail for shares', async () => {
  const inSlack = await system.createUser();
  const byEmail = await system.createUser();
  await linkBySignIn('U0SHARED', inSlack.token);
  await linkBySignIn('U0SHAREDMAIL', byEmail.token);
  await system.api
    .put(`${API}/users/me/settings/communication/channels`)
    .set(...byEmail.auth)
    .send({ share_question: 'email' })
    .expect(200);
  const q = await routedQuestion(system, 'siphon', 'Is a siphon brewer worth the trouble?');
  await system.api
    .post(`${API}/questions/${q.id}/share`)
    .set(...q.asker.auth)
    .send({ recipients: [inSlack.user.id, byEmail.user.id] })
    .expect(200);
  await system.chatCaughtUp();
  const shared = directMessages('U0SHARED', q.id);
  expect(shared.map((c) => c.args.text)).toEqual([expect.stringContaining('A question was shared with you')]);
  expect(directMessages('U0SHAREDMAIL', q.id)).toHaveLength(0);
});

test('a linked author is told in Slack when their solution expires and when its validation is requested; one who chose e-mail is not', async () => {
  const inSlack = await system.createUser();
  const byEmail = await system.createUser();
  await linkBySignIn('U0VALIDATE', inSlack.token);
  await linkBySignIn('U0VALIDATEMAIL', byEmail.token);
  await system.api
    .put(`${API}/users/me/settings/communication/channels`)
    .set(...byEmail.auth)
    .send({ validation_request: 'email' })
    .expect(200);
  // The linked author asked the question too: the routing never sends them their own question, so
  // what they get of the validation request is the notice about their solution.
  const q = await system.api
    .post(`${API}/questions`)
    .set(...inSlack.auth)
    .send({ title: 'Does a French press need a coarse grind?', description: '<p>french press</p>' })
    .expect(201);
  await system.api
    .put(`${API}/questions/${q.body.id}/publish`)
    .set(...inSlack.auth)
    .expect(200);
  const solutions = [
    await publishedSolution(system, inSlack.token, q.body.id, '<p>Coarse, like sea salt.</p>'),
    await publishedSolution(system, byEmail.token, q.body.id, '<p>Medium-coarse will do.</p>'),
  ];
  const aboutValidity = (user: string) =>
    directMessages(user, q.body.id)
      .map((c) => c.args.text as string)
      .filter((text) => !text.startsWith('A new solution'));
  const setValidation = async (on: boolean) => {
    await system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ solution_validation_enabled: on })
      .expect(200);
    await system.services.users.runtime.relay.flush();
    await system.services.content.consumers.users.caughtUp();
  };
  await setValidation(true);
  try {
    await system.services.content.runtime.db
      .updateTable('solutions' as never)
      .set({ expires: new Date(Date.now() - 60_000) } as never)
      .where('id' as never, 'in', solutions as never)
      .execute();
    await system.services.content.solutionExpiry.runOnce();
    await system.chatCaughtUp();
    expect(aboutValidity('U0VALIDATE')).toEqual([expect.stringContaining('Your solution has expired')]);
    expect(aboutValidity('U0VALIDATEMAIL')).toEqual([]);

    await system.api
      .put(`${API}/questions/${q.body.id}/request-validation`)
      .set(...(await system.createUser()).auth)
      .expect(200);
    await system.chatCaughtUp();
    expect(aboutValidity('U0VALIDATE')).toEqual([
      expect.stringContaining('Your solution has expired'),
      expect.stringContaining('its validation was requested'),
    ]);
    expect(aboutValidity('U0VALIDATEMAIL')).toEqual([]);
  } finally {
    await setValidation(false);
  }
});
