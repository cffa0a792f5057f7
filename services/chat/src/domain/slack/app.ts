import { createHash } from 'node:crypto';
import type { PlatformAnswer } from '@kn/contracts';
import { type Db, sql } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import { App, isValidSlackRequest, LogLevel, type Receiver } from '@slack/bolt';
import type { ChatSchema } from '../../db/schema.ts';
import { actorOf, createLinkCode, installationOf, linkByEmail } from '../links.ts';
import type { PlatformDeps } from '../platform.ts';
import { sayWhy } from '../refusal.ts';
import * as blocks from './blocks.ts';
import type { SlackClient } from './web-api.ts';

/** Slack's window for a request's timestamp, both ways (https://api.slack.com/authentication/verifying-requests-from-slack). */
export const SLACK_WINDOW_SECONDS = 5 * 60;

const answer = (status: number, body?: unknown): PlatformAnswer =>
  body === undefined
    ? { status, content_type: null, body: null }
    : typeof body === 'string'
      ? { status, content_type: 'text/plain; charset=utf-8', body }
      : { status, content_type: 'application/json', body: JSON.stringify(body) };
const refused = (message: string) => answer(401, { code: 'Unauthorized', message });

/** The names a Slack request gives its person and workspace (a command's user_name, an action's user and team). */
export function slackNames(from: unknown) {
  const f = (from ?? {}) as {
    user_name?: string;
    team_domain?: string;
    user?: { username?: string; name?: string };
    team?: { domain?: string } | null;
  };
  return {
    chatUserName: f.user_name ?? f.user?.username ?? f.user?.name ?? null,
    workspaceName: f.team_domain ?? f.team?.domain ?? null,
  };
}

/** Bolt's logger interface on our logger. */
function boltLogger(logger: Logger) {
  let level = LogLevel.WARN;
  return {
    debug: (...msg: unknown[]) => logger.debug({ bolt: msg }),
    info: (...msg: unknown[]) => logger.info({ bolt: msg }),
    warn: (...msg: unknown[]) => logger.warn({ bolt: msg }),
    error: (...msg: unknown[]) => logger.error({ bolt: msg }),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

export interface SlackDeps extends PlatformDeps {
  /** The Web API for what cannot wait for the outbox: opening a modal (its trigger lasts 3 s), users.info. */
  client: SlackClient;
}

/**
 * The Slack app: Bolt's listeners behind a receiver fed by the gateway's requests (through the
 * bus), so that the signature is checked on the bytes Slack signed. Every listener acts only for
 * a linked chat user; anyone else is offered the link to sign in.
 */
export function slackApp(deps: SlackDeps) {
  const { db, config, flows, outbox, client } = deps;
  const publicUrl = config.PUBLIC_URL.replace(/\/$/, '');
  let bolt: App | undefined;
  const receiver: Receiver = {
    init: (app) => {
      bolt = app;
    },
    start: async () => undefined,
    stop: async () => undefined,
  };
  const app = new App({
    receiver,
    // One workspace token: no auth.test round trip (a 429 there would fail every request).
    authorize: async () => ({ botToken: config.SLACK_BOT_TOKEN, botId: 'B_KN', botUserId: 'U_KN' }),
    clientOptions: { slackApiUrl: config.SLACK_API_URL, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true },
    logger: boltLogger(deps.logger) as never,
    ignoreSelf: false,
    convoStore: false,
  });

  /** The linked network user of a Slack user, linking by confirmed e-mail when the network trusts it. */
  const who = async (teamId: string, userId: string) => {
    const installation = await installationOf(db, 'slack', teamId);
    const actor = await actorOf(db, installation.id, userId);
    if (actor || config.SLACK_TRUST_EMAIL !== 'true') return { installation, actor };
    try {
      const info = await client.users.info({ user: userId });
      const user = info.user as { is_email_confirmed?: boolean; profile?: { email?: string } } | undefined;
      const email = user?.is_email_confirmed ? user.profile?.email : null;
      const linked = await linkByEmail(db, { installationId: installation.id, chatUserId: userId, conversationId: null, email });
      if (linked) return { installation, actor: linked };
    } catch (err) {
      deps.logger.warn({ err }, 'Slack users.info failed; the person links by signing in');
    }
    return { installation, actor: null };
  };
  /** A link code for a Slack user, with the names the request gave (shown on the web page before linking). */
  const linkPrompt = async (installationId: number, userId: string, from: unknown) => {
    const code = await createLinkCode(db, {
      installationId,
      chatUserId: userId,
      ...slackNames(from),
      conversationId: null,
      ttlMs: config.CHAT_LINK_CODE_TTL_MS,
      now: deps.clock.now(),
    });
    return blocks.linkPrompt(`${publicUrl}/chat/link?code=${code}`);
  };
  const ephemeral = (message: blocks.Message) => ({ response_type: 'ephemeral', ...message }) as never;
  /** A message only this person sees, posted through the outbox (after an action, where the HTTP answer cannot carry it). */
  const tell = (installationId: number, key: string, user: string, channel: string | undefined, message: blocks.Message) =>
    outbox.enqueue(db, [
      channel
        ? { key, installationId, recipient: user, kind: 'ephemeral', payload: { ...message, channel } }
        : { key, installationId, recipient: user, kind: 'post', payload: { ...message } },
    ]);

  app.command(/^\/(ask|kn)$/, async ({ command, ack }) => {
    const { installation, actor } = await who(command.team_id, command.user_id);
    if (!actor) return ack(ephemeral(await linkPrompt(installation.id, command.user_id, command)));
    const [verb, ...rest] = command.text.trim().split(/\s+/);
    const isAsk = command.command === '/ask' || verb === 'ask';
    const text = command.command === '/ask' ? command.text.trim() : rest.join(' ');
    try {
      if (!text)
        return ack(
          ephemeral(
            blocks.notice(
              `Say what to ${isAsk ? 'ask' : 'search for'}: ${command.command}${command.command === '/kn' ? ' search' : ''} <text>`,
            ),
          ),
        );
      if (isAsk) return ack(ephemeral(blocks.similarFirst(publicUrl, text, await flows.similar(actor, text))));
      if (verb === 'search') return ack(ephemeral(blocks.searchResults(publicUrl, text, await flows.search(actor, text))));
      return ack(ephemeral(blocks.notice('Try /kn search <text> or /kn ask <text>.')));
    } catch (err) {
      return ack(ephemeral(blocks.notice(`Not done: ${sayWhy(err)}`)));
    }
  });

  app.action('ask_network', async ({ body, ack, action }) => {
    await ack();
    const b = body as {
      team: { id: string };
      user: { id: string };
      channel?: { id: string };
      container?: { message_ts?: string };
      trigger_id: string;
    };
    const { installation, actor } = await who(b.team.id, b.user.id);
    if (!actor)
      return void (await tell(
        installation.id,
        `link:${b.trigger_id}`,
        b.user.id,
        b.channel?.id,
        await linkPrompt(installation.id, b.user.id, b),
      ));
    const text = (action as { value: string }).value;
    const source = `slack:${b.team.id}:${b.user.id}:${b.container?.message_ts ?? b.trigger_id}`;
    let message: blocks.Message;
    try {
      const { question, experts } = await flows.ask(actor, source, text);
      message = blocks.asked(publicUrl, question, experts);
    } catch (err) {
      message = blocks.notice(`Not asked: ${sayWhy(err)}`);
    }
    await tell(installation.id, `ask:${source}`, b.user.id, b.channel?.id, message);
  });

  app.shortcut('ask_network', async ({ shortcut, ack }) => {
    await ack();
    const s = shortcut as {
      team: { id: string; domain?: string };
      user: { id: string };
      channel: { id: string };
      message: { text?: string; ts: string; thread_ts?: string };
      trigger_id: string;
    };
    const { installation, actor } = await who(s.team.id, s.user.id);
    if (!actor)
      return void (await tell(
        installation.id,
        `link:${s.trigger_id}`,
        s.user.id,
        s.channel.id,
        await linkPrompt(installation.id, s.user.id, s),
      ));
    const thread = `https://${s.team.domain ?? 'app'}.slack.com/archives/${s.channel.id}/p${s.message.ts.replace('.', '')}`;
    const source = `slack:${s.team.id}:${s.user.id}:${s.channel.id}:${s.message.ts}`;
    let message: blocks.Message;
    try {
      const { question, experts } = await flows.ask(actor, source, s.message.text ?? '', {
        url: thread,
        label: 'The Slack thread it came from',
      });
      message = blocks.asked(publicUrl, question, experts);
    } catch (err) {
      message = blocks.notice(`Not asked: ${sayWhy(err)}`);
    }
    await tell(installation.id, `ask:${source}`, s.user.id, s.channel.id, message);
  });

  /** A button of a direct message: its person, their network user, the id it carries and the message's outbox key. */
  const pressed = async (body: unknown, action: unknown) => {
    const b = body as {
      team: { id: string };
      user: { id: string };
      trigger_id: string;
      message?: { ts: string };
      channel?: { id: string };
    };
    const { installation, actor } = await who(b.team.id, b.user.id);
    const id = Number((action as { value: string }).value);
    const posted =
      b.message && b.channel
        ? await db
            .selectFrom('messages')
            .select(['key', 'question_id'])
            .where('channel', '=', b.channel.id)
            .where('ts', '=', b.message.ts)
            .executeTakeFirst()
        : undefined;
    /** What an unlinked person's press gets: the offer to link, to them alone. */
    const offerLink = async () => {
      await tell(installation.id, `link:${b.trigger_id}`, b.user.id, undefined, await linkPrompt(installation.id, b.user.id, b));
    };
    return { b, installation, actor, id, posted, offerLink };
  };
  /** Changes the direct message the button was on, through the outbox (one edit per action). */
  const edit = async (installationId: number, posted: { key: string } | undefined, user: string, step: string, message: blocks.Message) => {
    if (posted)
      await outbox.enqueue(db, [
        { key: `${posted.key}:${step}`, installationId, recipient: user, kind: 'update', edits: posted.key, payload: { ...message } },
      ]);
  };

  app.action('answer', async ({ body, ack, action }) => {
    await ack();
    const { b, actor, id, offerLink } = await pressed(body, action);
    if (!actor) return offerLink();
    const question = await flows.question(actor, id);
    await client.views.open({ trigger_id: b.trigger_id, view: blocks.answerModal(question) as never });
  });

  app.action('forward', async ({ body, ack, action }) => {
    await ack();
    const { b, actor, id, offerLink } = await pressed(body, action);
    if (!actor) return offerLink();
    const question = await flows.question(actor, id);
    await client.views.open({ trigger_id: b.trigger_id, view: blocks.forwardModal(question) as never });
  });

  app.action('not_me', async ({ body, ack, action }) => {
    await ack();
    const { b, installation, actor, id, posted, offerLink } = await pressed(body, action);
    if (!actor) return offerLink();
    let what: string;
    let question = { id, title: `#${id}` };
    try {
      question = await flows.question(actor, id);
      const next = await flows.notMe(actor, id);
      what = next ? `passed on to ${next.firstname} ${next.lastname}` : 'noted; nobody else is left to ask';
    } catch (err) {
      what = `not passed on: ${sayWhy(err)}`;
    }
    await edit(installation.id, posted, b.user.id, 'not_me', blocks.expertDone(publicUrl, question, what));
  });

  app.action('accept', async ({ body, ack, action }) => {
    await ack();
    const { b, installation, actor, id, posted, offerLink } = await pressed(body, action);
    if (!actor) return offerLink();
    let message: blocks.Message;
    try {
      await flows.accept(actor, id);
      message = blocks.notice('You accepted this solution. Thank you!');
    } catch (err) {
      message = blocks.notice(`Not accepted: ${sayWhy(err)}`);
    }
    await edit(installation.id, posted, b.user.id, 'accept', message);
  });

  app.view('answer_modal', async ({ ack, body, view }) => {
    const { installation, actor } = await who(body.team?.id ?? '', body.user.id);
    if (!actor) return ack({ response_action: 'errors', errors: { solution: 'Link your account first (/kn).' } });
    const text = view.state.values.solution?.text?.value?.trim() ?? '';
    if (!text) return ack({ response_action: 'errors', errors: { solution: 'Write a solution.' } });
    const questionId = Number(view.private_metadata);
    try {
      await flows.answer(actor, questionId, text);
    } catch (err) {
      return ack({ response_action: 'errors', errors: { solution: sayWhy(err) } });
    }
    await ack();
    const question = await flows.question(actor, questionId).catch(() => ({ id: questionId, title: `#${questionId}` }));
    const asked = await db
      .selectFrom('messages')
      .select(['key'])
      .where('installation_id', '=', installation.id)
      .where('recipient', '=', body.user.id)
      .where('question_id', '=', questionId)
      .where('kind', '=', 'post')
      .execute();
    for (const posted of asked)
      await edit(installation.id, posted, body.user.id, 'answered', blocks.expertDone(publicUrl, question, 'you answered it. Thank you!'));
  });

  // The forward dialog's colleague: any network person, found as the caller sees them (name or e-mail).
  app.options('colleague', async ({ body, ack }) => {
    const b = body as { team?: { id: string } | null; user: { id: string }; value?: string };
    const { actor } = await who(b.team?.id ?? '', b.user.id);
    if (!actor) return ack({ options: [] });
    const people = await flows.colleagues(actor, b.value ?? '').catch(() => []);
    return ack({ options: people.map((p) => blocks.colleagueOption(p)) });
  });

  app.view('forward_modal', async ({ ack, body, view }) => {
    const { actor } = await who(body.team?.id ?? '', body.user.id);
    if (!actor) return ack({ response_action: 'errors', errors: { recipient: 'Link your account first (/kn).' } });
    const recipient = Number(view.state.values.recipient?.colleague?.selected_option?.value);
    if (!Number.isSafeInteger(recipient) || recipient <= 0)
      return ack({ response_action: 'errors', errors: { recipient: 'Choose a colleague from the list.' } });
    try {
      await flows.forward(actor, Number(view.private_metadata), recipient, view.state.values.message?.text?.value ?? null);
    } catch (err) {
      return ack({ response_action: 'errors', errors: { recipient: sayWhy(err) } });
    }
    await ack();
  });

  app.event('link_shared', async ({ event, body }) => {
    const team = (body as { team_id: string }).team_id;
    const { installation, actor } = await who(team, event.user);
    // Unfurled with the rights of the person who posted the link: never for someone not linked.
    if (!actor) return;
    const unfurls: Record<string, unknown> = {};
    for (const { url } of event.links) {
      const question = await flows.linked(actor, publicUrl, url);
      if (question) unfurls[url] = blocks.unfurl(question);
    }
    if (Object.keys(unfurls).length)
      await outbox.enqueue(db, [
        {
          key: `unfurl:${(body as { event_id: string }).event_id}`,
          installationId: installation.id,
          recipient: event.user,
          kind: 'unfurl',
          payload: { text: '', channel: event.channel, ts: event.message_ts, unfurls },
        },
      ]);
  });

  /** The request exactly as Slack sent it: checked, then handed to Bolt; answers what the listener acknowledged with. */
  async function handle(request: { body: string; headers: Record<string, string> }): Promise<PlatformAnswer> {
    if (!config.SLACK_SIGNING_SECRET) return refused('Slack is not configured here');
    const timestamp = Number(request.headers['x-slack-request-timestamp']);
    const signature = request.headers['x-slack-signature'] ?? '';
    const nowMs = deps.clock.now().getTime();
    // Bolt refuses only the stale ones; a timestamp from the future is as suspect.
    if (!Number.isInteger(timestamp) || Math.abs(nowMs / 1000 - timestamp) > SLACK_WINDOW_SECONDS)
      return refused('the request is too old or from the future');
    const valid = isValidSlackRequest({
      signingSecret: config.SLACK_SIGNING_SECRET,
      body: request.body,
      headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
      nowMilliseconds: nowMs,
    });
    if (!valid) return refused('the request is not signed with the app’s signing secret');
    // A signed request is good for its whole window: each is served once.
    const fresh = await db
      .insertInto('seen_requests')
      .values({ signature: createHash('sha256').update(signature).digest('hex'), seen: new Date(timestamp * 1000) })
      .onConflict((c) => c.doNothing())
      .returning('signature')
      .executeTakeFirst();
    if (!fresh) return refused('the request was served already (replay)');
    const body = parseBody(request.body, request.headers['content-type'] ?? '');
    if (body === null) return answer(400, { code: 'ValidationError', message: 'the body is neither JSON nor a form' });
    if (body.type === 'url_verification') return answer(200, { challenge: body.challenge });
    // Bolt's listeners acknowledge first and go on (a modal's errors are the acknowledgement itself):
    // Slack is answered with the acknowledgement as soon as there is one, and the rest runs on.
    let acknowledge = (_body: { body: unknown }) => {};
    const acknowledged = new Promise<{ body: unknown }>((resolve) => {
      acknowledge = resolve;
    });
    const event = {
      body,
      retryNum: Number(request.headers['x-slack-retry-num']) || undefined,
      retryReason: request.headers['x-slack-retry-reason'],
      ack: async (response?: unknown) => acknowledge({ body: response }),
    };
    const listening = deps.background
      .run(() => bolt!.processEvent(event as never))
      .then(
        () => null,
        () => answer(500, { code: 'InternalError', message: 'the app failed on this request' }),
      );
    const first = await Promise.race([acknowledged, listening]);
    if (first === null) return answer(200);
    if ('status' in first) return first;
    const response = first.body;
    return response === undefined || response === '' ? answer(200) : answer(200, response);
  }

  return { app, handle };
}

function parseBody(raw: string, contentType: string): Record<string, any> | null {
  try {
    if (contentType.startsWith('application/json')) return JSON.parse(raw);
    const form = Object.fromEntries(new URLSearchParams(raw));
    // Interactivity sends one form field, payload, holding JSON.
    return typeof form.payload === 'string' ? JSON.parse(form.payload) : form;
  } catch {
    return null;
  }
}

/** Drops the signatures that have left their window: a replay of one is refused by its timestamp. */
export async function forgetOldRequests(db: Db<ChatSchema>) {
  const gone = await db
    .deleteFrom('seen_requests')
    .where('seen', '<', sql<Date>`now() - ${`${2 * SLACK_WINDOW_SECONDS} seconds`}::interval`)
    .executeTakeFirst();
  return Number(gone.numDeletedRows);
}
