import {
  CommunicationFlags,
  type EmailSettings,
  type LanguageSettings,
  NETWORK_SETTINGS_DEFAULTS,
  type NetworkSettings,
  NotificationEmailDefaults,
  validationError,
} from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { UsersConfig } from '../config.ts';
import type { UserRow, UsersSchema } from '../db/schema.ts';

export type NetworkSettingsValues = Omit<NetworkSettings, 'webhook_secret_set'>;

export function networkDefaults(config: Pick<UsersConfig, 'NETWORK_NAME'>): NetworkSettingsValues {
  return { ...NETWORK_SETTINGS_DEFAULTS, network_name: config.NETWORK_NAME };
}

export interface NetworkSettingsStore {
  get(db?: Executor<UsersSchema>): Promise<NetworkSettings>;
  /** Forget the cached copy (after this instance changed the settings). */
  invalidate(): void;
}

/**
 * Network settings are read on nearly every request (email disguise), so each instance keeps them
 * for a second; another instance's change is seen within that second.
 */
export function networkSettingsStore(db: Executor<UsersSchema>, defaults: NetworkSettingsValues, ttlMs = 1000): NetworkSettingsStore {
  let cached: { at: number; value: NetworkSettings } | undefined;
  return {
    async get(executor) {
      if (!executor && cached && Date.now() - cached.at < ttlMs) return cached.value;
      const row = await (executor ?? db).selectFrom('network_settings').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
      const value: NetworkSettings = {
        ...defaults,
        ...(row.settings as Partial<NetworkSettingsValues>),
        webhook_secret_set: row.webhook_secret !== null,
      };
      if (!executor) cached = { at: Date.now(), value };
      return value;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

export function resolveLanguageSettings(user: Pick<UserRow, 'language_settings'>, network: NetworkSettings): LanguageSettings {
  const own = user.language_settings as Partial<LanguageSettings>;
  const hasAll = own.has_all_languages ?? true;
  const chosen = (own.content_languages ?? []).filter((l) => network.content_languages.includes(l));
  const interfaceLanguage = own.interface_language ?? network.default_language;
  return {
    content_languages: hasAll || chosen.length === 0 ? network.content_languages : chosen,
    has_all_languages: hasAll,
    interface_language: interfaceLanguage,
    translation_language: own.translation_language ?? interfaceLanguage,
  };
}

/** Merges a change into the stored overrides. Choosing languages explicitly turns has_all_languages off. */
export function changeLanguageSettings(
  stored: Record<string, unknown>,
  change: Partial<LanguageSettings>,
  network: NetworkSettings,
): Record<string, unknown> {
  const unknown = (change.content_languages ?? []).filter((l) => !network.content_languages.includes(l));
  if (unknown.length)
    throw validationError('content_languages must be languages of the network', [
      { path: 'content_languages', code: 'invalid_value', message: `not a content language of this network: ${unknown.join(', ')}` },
    ]);
  const next = { ...stored, ...change };
  if (change.content_languages && change.has_all_languages === undefined) next.has_all_languages = false;
  return next;
}

export function resolveEmailSettings(user: Pick<UserRow, 'email_settings'>): EmailSettings {
  return { ...CommunicationFlags, ...NotificationEmailDefaults, ...(user.email_settings as Partial<EmailSettings>) } as EmailSettings;
}
