import type { Bus } from '@kn/bus';
import type { chatOperations, Handlers, NotificationChannels } from '@kn/contracts';
import { type Db, json, transaction } from '@kn/db';
import type { Clock } from '@kn/service';
import type { ChatSchema } from '../db/schema.ts';
import { channelsOf, chatChoices, splitChannel, storedChoices } from '../domain/channels.ts';
import { linksOf, previewLinkCode, redeemLinkCode, unlink } from '../domain/links.ts';
import type { NetworkCaller } from '../domain/network.ts';

type PlatformHandler = (request: {
  body: string;
  headers: Record<string, string>;
}) => Promise<{ status: number; content_type: string | null; body: string | null }>;

export function createHandlers(deps: {
  db: Db<ChatSchema>;
  bus: Bus;
  clock: Clock;
  call: NetworkCaller;
  chatByDefault: boolean;
  slack: PlatformHandler;
  teams: PlatformHandler;
}): Handlers<typeof chatOperations> {
  const { db, call } = deps;
  const channels = async (actor: Parameters<NetworkCaller>[1], executor = db as Parameters<typeof storedChoices>[0]) => {
    const email = await call('getEmailSettings', actor);
    const stored = (await storedChoices(executor, [actor.id])).get(actor.id);
    return channelsOf(email as Record<string, unknown>, chatChoices(stored, deps.chatByDefault), email.email_enabled === true);
  };
  return {
    getNotificationChannels: ({ actor }) => channels(actor),

    // The chat half is written here, the e-mail half by the users service; its refusal rolls the chat half back.
    updateNotificationChannels: ({ actor, body }) =>
      transaction(db, async (tx) => {
        const changes = Object.entries(body) as Array<[keyof NotificationChannels, NotificationChannels[keyof NotificationChannels]]>;
        const stored = (await storedChoices(tx, [actor.id])).get(actor.id) ?? {};
        const chat = { ...stored, ...Object.fromEntries(changes.map(([type, channel]) => [type, splitChannel(channel).chat])) };
        await tx
          .insertInto('chat_settings')
          .values({ user_id: actor.id, chat: json(chat) })
          .onConflict((c) => c.column('user_id').doUpdateSet({ chat: json(chat) }))
          .execute();
        const email = Object.fromEntries(changes.map(([type, channel]) => [type, splitChannel(channel).email]));
        const settings = await call('updateEmailSettings', actor, { body: email });
        return channelsOf(settings as Record<string, unknown>, chatChoices(chat, deps.chatByDefault), settings.email_enabled === true);
      }),

    previewChatLink: ({ body }) => previewLinkCode(db, body.code, deps.clock.now()),
    linkChatAccount: ({ actor, body }) => redeemLinkCode(db, body.code, actor.id, deps.clock.now()),
    listChatLinks: async ({ actor }) => {
      const items = await linksOf(db, actor.id);
      return { total: items.length, items };
    },
    deleteChatLink: async ({ actor, params }) => {
      await unlink(db, actor.id, params.id);
      return undefined;
    },

    slackRequest: ({ body }) => deps.slack(body),
    teamsRequest: ({ body }) => deps.teams(body),
  };
}
