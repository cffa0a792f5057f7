import {
  CommunicationFlags,
  type EmailSettings,
  NotificationEmailDefaults,
  type NotificationEmailType,
  type NotificationType,
} from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { NotificationsSchema, UserProjectionRow } from '../db/schema.ts';

/** What this service needs of the network settings; the users service's defaults until its first change event. */
export interface NetworkView {
  default_language: string;
  network_name: string;
  anonymize_users_email: boolean;
  email_delivery_enabled: boolean;
  webhook_enabled: boolean;
  webhook_url: string | null;
}

export const NETWORK_DEFAULTS: NetworkView = {
  default_language: 'en',
  network_name: 'Knowledge Network',
  anonymize_users_email: false,
  email_delivery_enabled: true,
  webhook_enabled: false,
  webhook_url: null,
};

export async function getNetwork(db: Executor<NotificationsSchema>): Promise<NetworkView> {
  const row = await db.selectFrom('network_projection').select('settings').where('id', '=', 1).executeTakeFirst();
  return { ...NETWORK_DEFAULTS, ...((row?.settings ?? {}) as Partial<NetworkView>) };
}

/** The user's email settings: the last announced ones, or the interface's defaults. */
export function emailSettingsOf(user: Pick<UserProjectionRow, 'email_settings'> | undefined): EmailSettings {
  return { ...CommunicationFlags, ...NotificationEmailDefaults, ...((user?.email_settings ?? {}) as Partial<EmailSettings>) };
}

/**
 * Types without an email setting of their own are governed by the closest one: a notification type
 * added without its entry here (or an email setting of its name) fails type-checking.
 */
export type EmailSettingOf = { [T in Exclude<NotificationType, NotificationEmailType>]: NotificationEmailType };
const SETTING_OF: EmailSettingOf = {
  validation_new_expert: 'validation_request',
  question_changed_to_solution_author: 'question_edited',
  solution_changed_to_question_poser: 'solution_edited',
  solution_changed_to_solution_rater: 'solution_edited',
  solution_expired: 'validation_request',
};

export function emailSettingFor(type: NotificationType): NotificationEmailType {
  return type in SETTING_OF ? SETTING_OF[type as keyof typeof SETTING_OF] : (type as NotificationEmailType);
}

/** Reserved addresses (RFC 2606 `.invalid`, used for imported users) never get mail. */
export const deliverable = (email: string) => !/\.invalid$/i.test(email.trim());

export function wantsEmail(
  network: NetworkView,
  user: Pick<UserProjectionRow, 'email_settings' | 'email' | 'is_deleted'> | undefined,
  type: NotificationType,
) {
  if (!network.email_delivery_enabled) return false;
  if (user && (user.is_deleted || !deliverable(user.email))) return false;
  const settings = emailSettingsOf(user);
  return settings.email_enabled && settings[emailSettingFor(type)] === 'on';
}

export function languageOf(user: Pick<UserProjectionRow, 'interface_language'> | undefined, network: NetworkView) {
  return user?.interface_language ?? network.default_language;
}
