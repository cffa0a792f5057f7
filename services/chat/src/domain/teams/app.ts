import type { PlatformAnswer } from '@kn/contracts';
import { AuthenticationConfiguration, BotFrameworkAuthenticationFactory } from 'botframework-connector';
import { actorOf, createLinkCode, installationOf, linkByEmail, TEAMS_NO_TENANT } from '../links.ts';
import type { PlatformDeps } from '../platform.ts';
import { sayWhy } from '../refusal.ts';
import * as cards from './cards.ts';
import type { TeamsConnector, TeamsCredentials } from './connector.ts';

/** What the bot answers a message outside its personal chat with someone. */
export const ONLY_PERSONAL = 'Write to me in our personal chat (Apps → Knowledge Network): there I ask, search and link your account.';

const json = (status: number, body?: unknown): PlatformAnswer =>
  body === undefined
    ? { status, content_type: null, body: null }
    : { status, content_type: 'application/json', body: JSON.stringify(body) };

interface Activity {
  type: string;
  id?: string;
  name?: string;
  /** installationUpdate: add, remove (…-upgrade). */
  action?: string;
  text?: string;
  value?: Record<string, any>;
  replyToId?: string;
  serviceUrl: string;
  channelId?: string;
  from: { id: string; name?: string; aadObjectId?: string };
  conversation: { id: string; tenantId?: string; conversationType?: string };
  channelData?: { tenant?: { id?: string } };
}

/**
 * The Teams bot: every activity's token is checked by the Bot Framework SDK (RS256, the keys of
 * the OpenID metadata, issuer, audience = the app id, the serviceUrl claim); then the activity is
 * handled as the linked network user. Replies and cards go through the outbox.
 */
export function teamsApp(deps: PlatformDeps & { credentials: TeamsCredentials; connector: TeamsConnector }) {
  const { db, config, flows, outbox } = deps;
  const publicUrl = config.PUBLIC_URL.replace(/\/$/, '');
  const trustedTenants = new Set(
    config.TEAMS_TRUST_EMAIL_TENANTS.split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  );

  /**
   * A Teams user of a tenant the network trusts, linked by their Microsoft account's e-mail (as
   * Teams answers it for the conversation's member); null when that is not possible.
   */
  async function linkedByEmail(activity: Activity, installationId: number, tenant: string, personal: string | null) {
    if (!trustedTenants.has(tenant)) return null;
    try {
      const member = await deps.connector.member(activity.serviceUrl, activity.conversation.id, activity.from.id);
      // The address is its tenant's word: only that of an account of the trusted tenant itself.
      if (member.tenantId && member.tenantId !== tenant) return null;
      return await linkByEmail(db, { installationId, chatUserId: activity.from.id, conversationId: personal, email: member.email });
    } catch (err) {
      deps.logger.warn({ err }, 'the Teams member could not be read; the person links by signing in');
      return null;
    }
  }
  const auth = BotFrameworkAuthenticationFactory.create(
    '',
    true,
    config.TEAMS_LOGIN_URL,
    'https://api.botframework.com',
    config.TEAMS_TOKEN_ISSUER,
    '',
    config.TEAMS_OPENID_METADATA_URL,
    // Emulator tokens are checked against the same keys: nothing is fetched from elsewhere.
    config.TEAMS_OPENID_METADATA_URL,
    '',
    deps.credentials,
    new AuthenticationConfiguration(),
  );

  async function handle(request: { body: string; headers: Record<string, string> }): Promise<PlatformAnswer> {
    if (!config.TEAMS_APP_ID) return json(401, { code: 'Unauthorized', message: 'Microsoft Teams is not configured here' });
    let activity: Activity;
    try {
      activity = JSON.parse(request.body) as Activity;
      if (typeof activity?.type !== 'string' || typeof activity.serviceUrl !== 'string' || !activity.from?.id || !activity.conversation?.id)
        throw new Error('not an activity');
    } catch {
      return json(400, { code: 'ValidationError', message: 'the body is not a Bot Framework activity' });
    }
    try {
      await auth.authenticateRequest(activity as never, request.headers.authorization ?? '');
    } catch (err) {
      deps.logger.info({ reason: (err as Error).message }, 'a Teams request was refused');
      return json(401, { code: 'Unauthorized', message: 'the Bot Framework token is missing or not valid for this bot' });
    }
    // Uninstalled: nothing to record (a message to the person then creates their chat again, if Teams lets it).
    if (activity.type === 'installationUpdate' && activity.action?.startsWith('remove')) return json(200);
    const tenant = activity.conversation.tenantId ?? activity.channelData?.tenant?.id ?? TEAMS_NO_TENANT;
    const installation = await installationOf(db, 'teams', tenant, activity.serviceUrl);
    // The personal chat with the bot is where its messages to the person go: recorded from any of
    // their activities there, the app's installation for them (installationUpdate, conversationUpdate) first.
    const personal = activity.conversation.conversationType === 'personal' ? activity.conversation.id : null;
    const actor =
      (await actorOf(db, installation.id, activity.from.id)) ?? (await linkedByEmail(activity, installation.id, tenant, personal));
    if (actor && personal && actor.link.conversation_id !== personal)
      await db.updateTable('links').set({ conversation_id: personal }).where('id', '=', actor.link.id).execute();
    const reply = (message: cards.TeamsMessage, step = 'reply') =>
      outbox.enqueue(db, [
        {
          key: `teams:${activity.id ?? deps.clock.now().getTime()}:${step}`,
          installationId: installation.id,
          recipient: activity.conversation.id,
          kind: 'post',
          payload: { ...message },
        },
      ]);
    /** A one-time link to sign in to the web app and link this Teams account. */
    const linkUrl = async () => {
      const code = await createLinkCode(db, {
        installationId: installation.id,
        chatUserId: activity.from.id,
        chatUserName: activity.from.name ?? null,
        // Teams names the tenant by its id only.
        workspaceName: null,
        // Only the personal chat: a channel's or group chat's id would carry the person's messages there.
        conversationId: personal,
        ttlMs: config.CHAT_LINK_CODE_TTL_MS,
        now: deps.clock.now(),
      });
      return `${publicUrl}/chat/link?code=${code}`;
    };
    const linkPrompt = async () => cards.linkPrompt(await linkUrl());

    if (activity.type === 'invoke' && activity.name === 'composeExtension/query') {
      // The compose box shows a text only (no card): the link is in it.
      if (!actor) {
        const url = await linkUrl();
        return json(200, { composeExtension: { type: 'message', text: `${cards.linkPrompt(url).text} ${url}` } });
      }
      const query = String((activity.value?.parameters as Array<{ value?: string }> | undefined)?.[0]?.value ?? '').trim();
      const items = query ? await flows.search(actor, query) : [];
      return json(200, cards.composeResult(items.map((q) => cards.searchResult(publicUrl, q))));
    }
    // A link pasted into a message: unfurled with the rights of the person who pasted it, never for someone not linked.
    if (activity.type === 'invoke' && activity.name === 'composeExtension/queryLink') {
      const question = actor ? await flows.linked(actor, publicUrl, String(activity.value?.url ?? '')) : null;
      return json(200, cards.composeResult(question ? [cards.unfurl(publicUrl, question)] : []));
    }
    // The expert card's colleague field, as the person types: the network's people they may see.
    if (activity.type === 'invoke' && activity.name === 'application/search') {
      const wanted = activity.value?.dataset === cards.COLLEAGUES_DATASET && actor;
      const people = wanted ? await flows.colleagues(actor, String(activity.value?.queryText ?? '')).catch(() => []) : [];
      return json(200, {
        type: 'application/vnd.microsoft.search.searchResponse',
        value: { results: people.map((p) => ({ title: p.name, value: String(p.id) })) },
      });
    }
    if (activity.type !== 'message') return json(200);
    // Answered at once: whatever the message asks for comes as a reply, through the outbox.
    deps.background.run(async () => {
      // A channel or group chat sees what the bot answers there: no link code, no results seen with
      // one person's rights; the personal chat is where the bot talks with a person.
      if (!personal) return reply(cards.notice(ONLY_PERSONAL));
      if (!actor) return reply(await linkPrompt());
      const value = activity.value;
      if (value && typeof value.action === 'string') return reply(await act(actor, value, activity, installation.id));
      // "@Knowledge Network ask …" in a channel arrives with the mention in the text.
      const text = (activity.text ?? '').replace(/<at>[^<]*<\/at>/g, '').trim();
      const [verb, ...rest] = text.split(/\s+/);
      const what = rest.join(' ').trim();
      try {
        if (verb?.toLowerCase() === 'ask' && what) return reply(cards.similarFirst(publicUrl, what, await flows.similar(actor, what)));
        if (verb?.toLowerCase() === 'search' && what) return reply(cards.searchResults(publicUrl, what, await flows.search(actor, what)));
        return reply(cards.notice('Write “ask <your question>” or “search <text>”.'));
      } catch (err) {
        return reply(cards.notice(`Not done: ${sayWhy(err)}`));
      }
    });
    return json(200);
  }

  /** A card's button: the card's message is edited to say what happened, the outcome is the reply. */
  async function act(
    actor: NonNullable<Awaited<ReturnType<typeof actorOf>>>,
    value: Record<string, any>,
    activity: Activity,
    installationId: number,
  ) {
    const posted = activity.replyToId
      ? await db
          .selectFrom('messages')
          .select('key')
          .where('installation_id', '=', installationId)
          .where('ts', '=', activity.replyToId)
          .executeTakeFirst()
      : undefined;
    const edit = (step: string, message: cards.TeamsMessage) =>
      posted
        ? outbox.enqueue(db, [
            {
              key: `${posted.key}:${step}`,
              installationId,
              recipient: activity.conversation.id,
              kind: 'update',
              edits: posted.key,
              payload: { ...message },
            },
          ])
        : Promise.resolve(0);
    try {
      switch (value.action) {
        case 'ask_network': {
          const { question, experts } = await flows.ask(
            actor,
            `teams:${activity.from.id}:${activity.replyToId ?? activity.id}`,
            String(value.text ?? ''),
          );
          return cards.asked(publicUrl, question, experts);
        }
        case 'answer': {
          const text = String(value.solution ?? '').trim();
          if (!text) return cards.notice('Write your solution in the card first.');
          await flows.answer(actor, Number(value.question), text);
          await edit('answered', cards.notice('You answered this question. Thank you!'));
          return cards.notice('Your solution is published.');
        }
        case 'not_me': {
          const next = await flows.notMe(actor, Number(value.question));
          const what = next ? `Passed on to ${next.firstname} ${next.lastname}.` : 'Noted; nobody else is left to ask.';
          await edit('not_me', cards.notice(what));
          return cards.notice(what);
        }
        case 'forward': {
          const recipient = Number(value.colleague);
          if (!Number.isSafeInteger(recipient) || recipient <= 0) return cards.notice('Choose a colleague in the card first.');
          await flows.forward(actor, Number(value.question), recipient, String(value.note ?? '').trim() || null);
          await edit('forward', cards.notice('You forwarded this question to a colleague. Thank you!'));
          return cards.notice('Forwarded.');
        }
        case 'accept': {
          await flows.accept(actor, Number(value.solution));
          await edit('accept', cards.notice('You accepted this solution. Thank you!'));
          return cards.notice('Accepted.');
        }
        default:
          return cards.notice('This button is not known here.');
      }
    } catch (err) {
      return cards.notice(`Not done: ${sayWhy(err)}`);
    }
  }

  return { handle };
}
