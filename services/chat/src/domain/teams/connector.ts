import { ConnectorClient, ServiceClientCredentialsFactory } from 'botframework-connector';
import type { ChatConfig } from '../../config.ts';
import type { MessageRow } from '../../db/schema.ts';
import { RetryLater } from '../outbox.ts';

/**
 * The bot's own token for its calls to a conversation's serviceUrl (OAuth client credentials at
 * TEAMS_LOGIN_URL), kept until a minute before it expires.
 */
function botToken(config: ChatConfig) {
  let cached: { token: string; until: number } | undefined;
  return async () => {
    if (cached && cached.until > Date.now()) return cached.token;
    const res = await fetch(config.TEAMS_LOGIN_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: config.TEAMS_APP_ID,
        client_secret: config.TEAMS_APP_PASSWORD,
        scope: 'https://api.botframework.com/.default',
      }),
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) throw new RetryLater(`the bot's token was refused: ${res.status}`, res.status, null);
    const body = (await res.json()) as { access_token: string; expires_in: number };
    cached = { token: body.access_token, until: Date.now() + (body.expires_in - 60) * 1000 };
    return cached.token;
  };
}

/**
 * The Bot Framework SDK's credentials for this bot: which app id tokens must be addressed to (the
 * audience its JWT validation checks), and how its outgoing requests are signed.
 */
export class TeamsCredentials extends ServiceClientCredentialsFactory {
  readonly #config: ChatConfig;
  readonly #token: () => Promise<string>;
  constructor(config: ChatConfig) {
    super();
    this.#config = config;
    this.#token = botToken(config);
  }
  override async isValidAppId(appId: string) {
    return appId !== '' && appId === this.#config.TEAMS_APP_ID;
  }
  override async isAuthenticationDisabled() {
    return false;
  }
  override async createCredentials() {
    return {
      signRequest: async <T extends { headers: { set(name: string, value: string): void } }>(request: T) => {
        request.headers.set('authorization', `Bearer ${await this.#token()}`);
        return request;
      },
    };
  }
}

/** A connector failure as the outbox sees it: RetryLater for 429, 5xx and the network, else the error (given up). */
export function teamsFailure(err: unknown): Error {
  const e = err as {
    statusCode?: number;
    response?: { headers?: { get(name: string): string | undefined } };
    code?: string;
    message?: string;
  };
  const status = e.statusCode ?? 0;
  const after = Number(e.response?.headers?.get('retry-after'));
  const wait = Number.isFinite(after) && after >= 0 ? after * 1000 : null;
  if (status === 429 || status >= 500) return new RetryLater(`Teams answered ${status}`, status, wait);
  if (!status && e.code !== undefined) return new RetryLater(`Teams could not be reached: ${e.message}`, null, null);
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * The bot's calls to a conversation's serviceUrl: sending an outbox message (a post, or an edit of
 * a posted one), and reading a member's account (its e-mail, for linking by a trusted address).
 */
export function teamsConnector(credentials: TeamsCredentials) {
  const clients = new Map<string, ConnectorClient>();
  const clientOf = async (serviceUrl: string) => {
    let client = clients.get(serviceUrl);
    if (!client) {
      client = new ConnectorClient((await credentials.createCredentials()) as never, { baseUri: serviceUrl });
      clients.set(serviceUrl, client);
    }
    return client;
  };
  return {
    async send(serviceUrl: string, row: MessageRow, original: { channel: string | null; ts: string | null } | null) {
      const payload = row.payload as { text: string; attachments?: unknown[] };
      const activity = { type: 'message', text: payload.text, attachments: payload.attachments as never };
      try {
        const client = await clientOf(serviceUrl);
        if (row.kind === 'update') {
          if (!original?.ts) throw new RetryLater('the message to edit is not posted yet', null, null);
          await client.conversations.updateActivity(original.channel!, original.ts, { ...activity, id: original.ts } as never);
          return original;
        }
        const sent = await client.conversations.sendToConversation(row.recipient, activity as never);
        return { channel: row.recipient, ts: sent.id ?? null };
      } catch (err) {
        throw err instanceof RetryLater ? err : teamsFailure(err);
      }
    },
    /**
     * Creates (Teams: finds) the personal chat of the bot with a person of a tenant, as Bot
     * Framework bots do for a proactive message to someone who never wrote to them; its id.
     */
    async createPersonal(serviceUrl: string, values: { botId: string; userId: string; tenantId: string }) {
      try {
        const client = await clientOf(serviceUrl);
        const created = await client.conversations.createConversation({
          isGroup: false,
          bot: { id: values.botId, name: '' },
          members: [{ id: values.userId, name: '' }],
          tenantId: values.tenantId,
          channelData: { tenant: { id: values.tenantId } },
        });
        if (!created.id) throw new Error('Teams created no conversation');
        return created.id;
      } catch (err) {
        throw teamsFailure(err);
      }
    },
    /** The Teams account of a conversation's member (Teams answers its e-mail and tenant beside the channel account). */
    async member(serviceUrl: string, conversationId: string, userId: string) {
      const client = await clientOf(serviceUrl);
      const account = await client.conversations.getConversationMember(conversationId, userId);
      return account as unknown as { email?: string; tenantId?: string };
    },
  };
}
export type TeamsConnector = ReturnType<typeof teamsConnector>;
