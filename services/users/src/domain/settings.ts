import { type Bus, call, writeEvent } from '@kn/bus';
import {
  type Actor,
  AppError,
  CommunicationFlags,
  conflict,
  type EmailSettings,
  type IdpGroupMapping,
  knowledgeSpacesOperations,
  type LanguageSettings,
  NETWORK_SETTINGS_DEFAULTS,
  type NetworkSettings,
  NotificationEmailDefaults,
  notFound,
  type usersOperations,
  validationError,
} from '@kn/contracts';
import { type Db, type Executor, json } from '@kn/db';
import { outboundUrlProblem } from '@kn/service';
import type { z } from 'zod';
import type { UsersConfig } from '../config.ts';
import type { UserRow, UsersSchema } from '../db/schema.ts';
import { applyGroupRoles, groupMemberIds } from './groups.ts';

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
      const stored = row.settings as Partial<NetworkSettingsValues>;
      const value: NetworkSettings = {
        ...defaults,
        ...stored,
        // Mappings stored before they could name knowledge spaces read as naming none.
        idp_group_mappings: (stored.idp_group_mappings ?? defaults.idp_group_mappings).map((m) => ({
          ...m,
          knowledge_spaces: m.knowledge_spaces ?? [],
        })),
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
  // A well-formed request the network's settings refuse (they may change): 409, not 400.
  if (unknown.length) throw conflict(`content_languages must be languages of the network; these are not: ${unknown.join(', ')}`);
  const next = { ...stored, ...change };
  if (change.content_languages && change.has_all_languages === undefined) next.has_all_languages = false;
  return next;
}

export function resolveEmailSettings(user: Pick<UserRow, 'email_settings'>): EmailSettings {
  return { ...CommunicationFlags, ...NotificationEmailDefaults, ...(user.email_settings as Partial<EmailSettings>) } as EmailSettings;
}

type StoredSettings = Pick<UserRow, 'language_settings' | 'email_settings'>;
const storedSettings = (db: Executor<UsersSchema>, userId: number) =>
  db.selectFrom('users').select(['language_settings', 'email_settings']).where('id', '=', userId);
type NetworkSettingsChange = z.output<typeof usersOperations.updateNetworkSettings.body>;

/** A user's own language and email settings, and the network's settings. */
/**
 * A 404 naming each knowledge space of the mappings that does not exist (a well-formed setting
 * whose space is not there, as an unknown category of a question is), asked of the content
 * service, which owns the spaces (they are never deleted, so what exists now stays).
 */
async function checkMappedSpaces(bus: Bus, mappings: readonly IdpGroupMapping[], actor: Actor, requestId: string) {
  if (!mappings.some((m) => m.knowledge_spaces.length)) return;
  const { items } = await call(bus, 'listKnowledgeSpaces', knowledgeSpacesOperations.listKnowledgeSpaces, {
    actor,
    params: undefined,
    query: undefined,
    body: undefined,
    requestId,
    url: '',
  });
  const known = new Set(items.map((space) => space.id));
  const errors = mappings.flatMap((m, i) =>
    m.knowledge_spaces.flatMap((id, j) =>
      known.has(id)
        ? []
        : [{ path: `idp_group_mappings.${i}.knowledge_spaces.${j}`, code: 'invalid_value', message: `no knowledge space ${id}` }],
    ),
  );
  if (errors.length) throw new AppError(404, 'NotFound', `idp_group_mappings: ${errors.map((e) => e.message).join(', ')}`, { errors });
}

export function settingsDomain(deps: {
  db: Db<UsersSchema>;
  bus: Bus;
  settings: NetworkSettingsStore;
  /** WEBHOOK_ALLOW_INTERNAL: a webhook_url may name a non-public address. */
  webhookAllowInternal: boolean;
  /** After commit: these users' roles changed (new idp_group_mappings). */
  rolesChanged?: (userIds: number[]) => void;
}) {
  const { db, settings } = deps;

  async function stored(userId: number): Promise<StoredSettings> {
    const row = await storedSettings(db, userId).executeTakeFirst();
    if (!row) throw notFound('user');
    return row;
  }

  /** Changes one user's stored settings and publishes them resolved. */
  async function change(userId: number, next: (row: StoredSettings) => Promise<Partial<StoredSettings>>) {
    return db.transaction().execute(async (tx) => {
      const row = await storedSettings(tx, userId).forUpdate().executeTakeFirst();
      if (!row) throw notFound('user');
      const changed = { ...row, ...(await next(row)) };
      await tx
        .updateTable('users')
        .set({
          language_settings: json(changed.language_settings),
          email_settings: json(changed.email_settings),
        })
        .where('id', '=', userId)
        .execute();
      const network = await settings.get(tx);
      const resolved = { language: resolveLanguageSettings(changed, network), email: resolveEmailSettings(changed) };
      await writeEvent(tx, 'users.settings.updated.v1', { user_id: userId, ...resolved }, { actorId: userId });
      return resolved;
    });
  }

  return {
    language: async (userId: number) => resolveLanguageSettings(await stored(userId), await settings.get()),
    changeLanguage: async (userId: number, body: Partial<LanguageSettings>) =>
      (
        await change(userId, async (row) => ({
          language_settings: changeLanguageSettings(row.language_settings, body, await settings.get()),
        }))
      ).language,

    email: async (userId: number) => resolveEmailSettings(await stored(userId)),
    changeEmail: async (userId: number, body: Partial<EmailSettings>) =>
      (await change(userId, async (row) => ({ email_settings: { ...row.email_settings, ...body } }))).email,
    resetEmail: async (userId: number) => {
      await change(userId, async () => ({ email_settings: {} }));
    },

    network: () => settings.get(db),
    async changeNetwork(body: NetworkSettingsChange, actor: Actor, requestId: string) {
      const { webhook_secret, ...values } = body;
      if (values.idp_group_mappings) await checkMappedSpaces(deps.bus, values.idp_group_mappings, actor, requestId);
      // Webhooks are POSTed from inside our network: a URL must not turn them against it (SSRF).
      const problem = values.webhook_url
        ? await outboundUrlProblem(values.webhook_url, { allowInternal: deps.webhookAllowInternal })
        : null;
      if (problem) throw validationError(`webhook_url: ${problem}`, [{ path: 'webhook_url', code: 'invalid_value', message: problem }]);
      const result = await db.transaction().execute(async (tx) => {
        const row = await tx.selectFrom('network_settings').selectAll().where('id', '=', 1).forUpdate().executeTakeFirstOrThrow();
        await tx
          .updateTable('network_settings')
          .set({
            settings: json({ ...row.settings, ...values }),
            ...(webhook_secret !== undefined ? { webhook_secret } : {}),
            updated: new Date(),
          })
          .where('id', '=', 1)
          .execute();
        const next = await settings.get(tx);
        await writeEvent(tx, 'users.network-settings.updated.v1', { settings: next }, { actorId: actor.id });
        const changed =
          values.idp_group_mappings === undefined
            ? []
            : await applyGroupRoles(tx, await groupMemberIds(tx), next.idp_group_mappings, actor.id);
        return { next, changed };
      });
      settings.invalidate();
      if (result.changed.length) deps.rolesChanged?.(result.changed);
      return result.next;
    },

    /** Write-only in the API and never in events: the notifications service asks for it to sign webhooks. */
    async webhookSecret() {
      const row = await db.selectFrom('network_settings').select('webhook_secret').where('id', '=', 1).executeTakeFirst();
      return { secret: row?.webhook_secret ?? null };
    },
  };
}
