import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

const ms = (fallback: number, description: string) => z.coerce.number().int().min(1).default(fallback).describe(description);

export const ChatConfig = BaseConfig.extend({
  PUBLIC_URL: z
    .string()
    .default('http://localhost:8080')
    .describe('Where users open the web client: links in chat messages (questions, linking an account) start with it.'),
  SLACK_SIGNING_SECRET: z
    .string()
    .default('')
    .describe(
      "The Slack app's signing secret: requests to /integrations/slack/events must carry its v0 signature. Empty: Slack is off (every request 401).",
    ),
  SLACK_BOT_TOKEN: z.string().default('').describe("The Slack app's bot token (`xoxb-…`) the service posts and opens modals with."),
  SLACK_API_URL: z
    .string()
    .url()
    .default('https://slack.com/api/')
    .describe("The Slack Web API's address (ends with `/`); a stand-in's in tests."),
  SLACK_TRUST_EMAIL: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      '`true`: a Slack user whose e-mail Slack confirmed is linked at once to the network user with that e-mail; `false`: every Slack user links by signing in to the web app once.',
    ),
  TEAMS_APP_ID: z
    .string()
    .default('')
    .describe(
      'The Microsoft app id of the Teams bot: the audience Bot Framework tokens must name. Empty: Teams is off (every request 401).',
    ),
  TEAMS_APP_PASSWORD: z.string().default('').describe("The bot's client secret, for the tokens of its proactive messages."),
  TEAMS_TRUST_EMAIL_TENANTS: z
    .string()
    .default('')
    .describe(
      "Microsoft Entra tenant ids (comma-separated) whose accounts' e-mail addresses the network trusts: a Teams user of one of them is linked at once to the one network user with the address their account has (as SLACK_TRUST_EMAIL does for Slack). Name only the organization's own tenants: in any other, an address is whatever its administrators typed. Empty: every Teams user links by signing in to the web app once.",
    ),
  TEAMS_OPENID_METADATA_URL: z
    .string()
    .url()
    .default('https://login.botframework.com/v1/.well-known/openidconfiguration')
    .describe("Bot Framework's OpenID metadata: where the keys that sign its tokens are listed."),
  TEAMS_TOKEN_ISSUER: z.string().default('https://api.botframework.com').describe('The issuer Bot Framework tokens must name.'),
  TEAMS_LOGIN_URL: z
    .string()
    .url()
    .default('https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token')
    .describe('Where the bot gets the token for its own calls to a conversation’s serviceUrl.'),
  CHAT_DEFAULT_CHANNEL: z
    .enum(['chat', 'email'])
    .default('chat')
    .describe(
      "The network's default for a linked chat user, per notification type the chat delivers: `chat` adds chat to what the e-mail setting says (so e-mail on means both), `email` leaves chat off until the person turns it on.",
    ),
  CHAT_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .describe('Attempts at a chat message before it is given up (kept, marked failed and logged).'),
  CHAT_RETRY_BASE_MS: ms(
    2_000,
    'First retry of a failed chat message without Retry-After (ms); each next one waits twice as long, up to CHAT_RETRY_MAX_MS.',
  ),
  CHAT_RETRY_MAX_MS: ms(600_000, 'Longest wait between two attempts at a chat message (ms), also for a longer Retry-After.'),
  CHAT_OUTBOX_POLL_MS: ms(1_000, 'How often the outbox looks for due messages when nothing woke it (ms).'),
  CHAT_DELIVERY_LEASE_MS: ms(60_000, 'How long an instance holds a message it is sending before another may take it (ms).'),
  CHAT_LINK_CODE_TTL_MS: ms(30 * 60_000, 'How long a link to connect a chat account stays valid (ms).'),
});
export type ChatConfig = z.infer<typeof ChatConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(ChatConfig, env);
