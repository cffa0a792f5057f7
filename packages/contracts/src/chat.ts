import { z } from 'zod';
import { Id, List, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { trimmedText } from './text.ts';

/**
 * The notification types the chat service delivers, each governed by the email setting of the
 * same name for its email half (docs/chat.md, "Where notifications go").
 */
export const ChatNotificationTypes = [
  'new_question',
  'validation_request',
  'question_forwarded',
  'share_question',
  'share_solution',
  'new_solution_to_your_question',
] as const;
export type ChatNotificationType = (typeof ChatNotificationTypes)[number];

export const NotificationChannel = z.enum(['email', 'chat', 'both', 'none']);
export type NotificationChannel = z.infer<typeof NotificationChannel>;

const channelsShape = Object.fromEntries(ChatNotificationTypes.map((t) => [t, NotificationChannel])) as Record<
  ChatNotificationType,
  typeof NotificationChannel
>;
export const NotificationChannels = z.object(channelsShape).meta({ id: 'NotificationChannels' });
export type NotificationChannels = z.infer<typeof NotificationChannels>;

export const ChatPlatform = z.enum(['slack', 'teams']);
export type ChatPlatform = z.infer<typeof ChatPlatform>;

export const ChatLink = z
  .object({
    id: Id,
    platform: ChatPlatform,
    workspace: z.string().describe('the Slack workspace (team id) or Teams tenant'),
    chat_user_id: z.string().describe("the person's id on the platform"),
    created: Timestamp,
  })
  .meta({ id: 'ChatLink' });

export const ChatLinkPreview = z
  .object({
    platform: ChatPlatform,
    workspace: z.string().describe('the Slack workspace (team id) or Teams tenant id'),
    workspace_name: z.string().nullable().describe("the Slack workspace's domain, when the request that made the code gave it"),
    chat_user_id: z.string().describe("the person's id on the platform"),
    chat_user_name: z.string().nullable().describe("the person's name on the platform, when the request that made the code gave it"),
    expires: Timestamp,
  })
  .meta({ id: 'ChatLinkPreview' });

/** A platform's request as the gateway hands it on: the body exactly as received, for the signature check. */
const PlatformRequest = z.object({
  body: z.string(),
  headers: z.record(z.string(), z.string()).describe('the request headers, names lower-case'),
});
/** What the gateway answers the platform. */
const PlatformAnswer = z.object({ status: z.number().int(), content_type: z.string().nullable(), body: z.string().nullable() });
export type PlatformAnswer = z.infer<typeof PlatformAnswer>;

const tag = 'Chat';

export const chatOperations = {
  getNotificationChannels: operation({
    service: 'chat',
    summary: 'Where each chat-capable notification type reaches the caller: email, chat, both or none',
    http: { method: 'GET', path: '/users/me/settings/communication/channels', auth: 'user', tag: 'User settings' },
    response: NotificationChannels,
  }),
  updateNotificationChannels: operation({
    service: 'chat',
    summary: "Change where notification types reach the caller (the email half is the email settings' per-type value)",
    http: { method: 'PUT', path: '/users/me/settings/communication/channels', auth: 'user', tag: 'User settings' },
    body: NotificationChannels.partial(),
    response: NotificationChannels,
  }),
  previewChatLink: operation({
    service: 'chat',
    summary: 'Which chat account a link code would make act as the caller: shown before they confirm; the code is not spent',
    http: {
      method: 'POST',
      path: '/chat/links/preview',
      auth: 'user',
      tag,
      answers: { 404: 'the code is unknown, used or expired' },
    },
    body: z.object({ code: trimmedText({ min: 1, max: 200 }) }),
    response: ChatLinkPreview,
  }),
  linkChatAccount: operation({
    service: 'chat',
    summary: 'Link the chat account that was given this code (by the Slack or Teams app) to the caller',
    http: {
      method: 'POST',
      path: '/chat/links',
      status: 201,
      auth: 'user',
      tag,
      answers: { 404: 'the code is unknown, used or expired', 409: 'the chat account is linked to another user' },
    },
    body: z.object({ code: trimmedText({ min: 1, max: 200 }) }),
    response: ChatLink,
  }),
  listChatLinks: operation({
    service: 'chat',
    summary: "The caller's linked chat accounts",
    http: { method: 'GET', path: '/chat/links', auth: 'user', tag },
    response: List(ChatLink),
  }),
  deleteChatLink: operation({
    service: 'chat',
    summary: "Unlink one of the caller's chat accounts (the app stops acting for it)",
    http: { method: 'DELETE', path: '/chat/links/:id', status: 204, auth: 'user', tag },
    params: z.object({ id: Id }),
  }),
  /** Internal: a request of Slack to /integrations/slack/events (events, commands, interactivity). */
  slackRequest: operation({
    service: 'chat',
    summary: "A Slack request, verified by its signature and answered in Slack's terms",
    body: PlatformRequest,
    response: PlatformAnswer,
  }),
  /** Internal: a Bot Framework activity to /integrations/teams/messages. */
  teamsRequest: operation({
    service: 'chat',
    summary: 'A Bot Framework activity, authenticated by its token and answered in its terms',
    body: PlatformRequest,
    response: PlatformAnswer,
  }),
} as const;
