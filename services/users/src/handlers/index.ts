import { type Bus, writeEvent } from '@kn/bus';
import { AUTH_REVOKED_SUBJECT, type AuthRevoked, type Handlers, notFound, type usersOperations, validationError } from '@kn/contracts';
import { type Db, json } from '@kn/db';
import { outboundUrlProblem } from '@kn/service';
import type { z } from 'zod';
import type { UsersSchema } from '../db/schema.ts';
import type { authDomain } from '../domain/auth.ts';
import { changeLanguageSettings, type NetworkSettingsStore, resolveEmailSettings, resolveLanguageSettings } from '../domain/settings.ts';
import type { UsersDomain } from '../domain/users.ts';

export function createHandlers(deps: {
  db: Db<UsersSchema>;
  bus: Bus;
  users: UsersDomain;
  auth: ReturnType<typeof authDomain>;
  settings: NetworkSettingsStore;
  /** WEBHOOK_ALLOW_INTERNAL: a webhook_url may name a non-public address. */
  webhookAllowInternal: boolean;
}): Handlers<typeof usersOperations> {
  const { db, bus, users, auth, settings } = deps;

  /** After commit: gateways drop what they cached about this token or user. */
  const announceRevoked = (message: z.infer<typeof AuthRevoked>) =>
    bus.nc.publish(bus.subject(AUTH_REVOKED_SUBJECT), JSON.stringify(message));

  /** Changes one user's settings columns and publishes the resolved settings. */
  async function changeSettings(
    userId: number,
    change: (row: { language_settings: Record<string, unknown>; email_settings: Record<string, unknown> }) => Promise<{
      language_settings?: Record<string, unknown>;
      email_settings?: Record<string, unknown>;
    }>,
  ) {
    return db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('users')
        .select(['language_settings', 'email_settings'])
        .where('id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw notFound('user');
      const next = { ...row, ...(await change(row)) };
      await tx
        .updateTable('users')
        .set({
          language_settings: json(next.language_settings),
          email_settings: json(next.email_settings),
        })
        .where('id', '=', userId)
        .execute();
      const network = await settings.get(tx);
      const resolved = { language: resolveLanguageSettings(next, network), email: resolveEmailSettings(next) };
      await writeEvent(tx, 'users.settings.updated.v1', { user_id: userId, ...resolved }, { actorId: userId });
      return resolved;
    });
  }

  async function ownRow(userId: number) {
    const row = await users.findLive(db, userId);
    if (!row) throw notFound('user');
    return row;
  }

  return {
    login: async ({ body }) => auth.login(body.email, body.password),
    revokeToken: async ({ actor }) => {
      await auth.revoke(actor.token_id);
      if (actor.token_id) announceRevoked({ token_id: actor.token_id });
      return undefined;
    },
    createTokenOnBehalf: async ({ body, actor }) => auth.onBehalfToken(body.user_id, actor),
    authenticate: async ({ body }) => auth.authenticate(body.token, body.on_behalf_of),
    importUsers: async ({ body, actor }) => users.importMany(body.users, actor?.id ?? null),
    getWebhookSecret: async () => {
      const row = await db.selectFrom('network_settings').select('webhook_secret').where('id', '=', 1).executeTakeFirst();
      return { secret: row?.webhook_secret ?? null };
    },

    createUser: async ({ body, actor }) => users.createByAdmin(body, actor),
    listUsers: async ({ query, actor, url }) => users.list(query, actor, url),
    getMe: async ({ actor }) => users.get(actor.id, actor),
    getUser: async ({ params, actor }) => users.get(params.id, actor),
    // A call without a caller sees what any user sees.
    getUsers: async ({ body, actor }) => ({ items: await users.getMany(body.ids, actor ?? { id: 0, roles: [] }) }),
    updateUser: async ({ params, body, actor }) => {
      const user = await users.update(params.id, body, actor);
      if (body.roles || body.password) announceRevoked({ user_id: params.id });
      return user;
    },
    deleteUser: async ({ params, actor }) => {
      await users.remove(params.id, actor);
      announceRevoked({ user_id: params.id });
      return undefined;
    },

    getLanguageSettings: async ({ actor }) => resolveLanguageSettings(await ownRow(actor.id), await settings.get()),
    updateLanguageSettings: async ({ actor, body }) =>
      (
        await changeSettings(actor.id, async (row) => ({
          language_settings: changeLanguageSettings(row.language_settings, body, await settings.get()),
        }))
      ).language,
    getEmailSettings: async ({ actor }) => resolveEmailSettings(await ownRow(actor.id)),
    updateEmailSettings: async ({ actor, body }) =>
      (await changeSettings(actor.id, async (row) => ({ email_settings: { ...row.email_settings, ...body } }))).email,
    resetEmailSettings: async ({ actor }) => {
      await changeSettings(actor.id, async () => ({ email_settings: {} }));
      return undefined;
    },

    getNetworkSettings: async () => settings.get(db),
    updateNetworkSettings: async ({ body, actor }) => {
      const { webhook_secret, ...values } = body;
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
        return next;
      });
      settings.invalidate();
      return result;
    },
  };
}
