import { type ChatNotificationType, ChatNotificationTypes, type NotificationChannel, type NotificationChannels } from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';

/** What a channel choice means for the two deliveries. */
export function splitChannel(channel: NotificationChannel): { email: 'on' | 'off'; chat: boolean } {
  return { email: channel === 'email' || channel === 'both' ? 'on' : 'off', chat: channel === 'chat' || channel === 'both' };
}

export function joinChannel(email: 'on' | 'off', chat: boolean): NotificationChannel {
  if (email === 'on') return chat ? 'both' : 'email';
  return chat ? 'chat' : 'none';
}

/** The chat half of every type: the person's own choice where they made one, else the network's default. */
export function chatChoices(stored: Record<string, boolean> | undefined, chatByDefault: boolean): Record<ChatNotificationType, boolean> {
  return Object.fromEntries(ChatNotificationTypes.map((t) => [t, stored?.[t] ?? chatByDefault])) as Record<ChatNotificationType, boolean>;
}

export function channelsOf(
  email: Record<string, unknown>,
  chat: Record<ChatNotificationType, boolean>,
  emailEnabled: boolean,
): NotificationChannels {
  return Object.fromEntries(
    ChatNotificationTypes.map((t) => [t, joinChannel(emailEnabled && email[t] === 'on' ? 'on' : 'off', chat[t])]),
  ) as NotificationChannels;
}

export async function storedChoices(db: Executor<ChatSchema>, userIds: number[]) {
  if (userIds.length === 0) return new Map<number, Record<string, boolean>>();
  const rows = await db.selectFrom('chat_settings').select(['user_id', 'chat']).where('user_id', 'in', userIds).execute();
  return new Map(rows.map((r) => [r.user_id, r.chat as Record<string, boolean>]));
}
