import type { Bus } from '@kn/bus';
import { AUTH_REVOKED_SUBJECT, type AuthRevoked, type Handlers, type usersOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { z } from 'zod';
import type { UsersSchema } from '../db/schema.ts';
import { type authDomain, effectiveRoles } from '../domain/auth.ts';
import { identitiesDomain } from '../domain/identities.ts';
import { scimDomain } from '../domain/scim/service.ts';
import { type NetworkSettingsStore, settingsDomain } from '../domain/settings.ts';
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
  const { bus, users, auth } = deps;
  const identities = identitiesDomain({ db: deps.db, users, settings: deps.settings });
  const settings = settingsDomain({
    ...deps,
    rolesChanged: (ids) => {
      for (const user_id of ids) announceRevoked({ user_id });
    },
  });
  const scim = scimDomain({ db: deps.db, settings: deps.settings, users });

  /** After commit: gateways drop what they cached about this token or user. */
  const announceRevoked = (message: z.infer<typeof AuthRevoked>) =>
    bus.nc.publish(bus.subject(AUTH_REVOKED_SUBJECT), JSON.stringify(message));

  return {
    login: async ({ body }) => {
      const { token, expires } = await auth.login(body.email, body.password);
      return { token, expires };
    },
    revokeToken: async ({ actor }) => {
      await auth.revoke(actor.token_id);
      if (actor.token_id) announceRevoked({ token_id: actor.token_id });
      return undefined;
    },
    createTokenOnBehalf: async ({ body, actor }) => auth.onBehalfToken(body.user_id, actor),
    authenticate: async ({ body }) => auth.authenticate(body.token, body.on_behalf_of, body.session),
    startSession: async ({ body }) => {
      const { token, expires, ended } = await auth.login(body.email, body.password, 'session');
      for (const token_id of ended) announceRevoked({ token_id });
      return { token, expires };
    },
    startIdentitySession: async ({ body }) => {
      const { userId, created, rolesChanged } = await identities.accountOf(body);
      if (rolesChanged) announceRevoked({ user_id: userId });
      const { token, expires, ended } = await auth.session(userId);
      for (const token_id of ended) announceRevoked({ token_id });
      return { token, expires, user_id: userId, created };
    },
    identityActor: async ({ body }) => {
      const { userId, roles, created, rolesChanged } = await identities.actorOf(body);
      if (rolesChanged) announceRevoked({ user_id: userId });
      return { id: userId, roles: effectiveRoles(roles), created };
    },
    importUsers: async ({ body, actor }) => users.importMany(body.users, actor?.id ?? null),
    getWebhookSecret: async () => settings.webhookSecret(),

    createUser: async ({ body, actor }) => users.createByAdmin(body, actor),
    listUsers: async ({ query, actor, url }) => users.list(query, actor, url),
    getMe: async ({ actor }) => users.get(actor.id, actor),
    getUser: async ({ params, actor }) => users.get(params.id, actor),
    listUsersById: async ({ query, actor }) => ({ items: await users.getMany(query.ids, actor) }),
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

    getLanguageSettings: async ({ actor }) => settings.language(actor.id),
    updateLanguageSettings: async ({ actor, body }) => settings.changeLanguage(actor.id, body),
    getEmailSettings: async ({ actor }) => settings.email(actor.id),
    updateEmailSettings: async ({ actor, body }) => settings.changeEmail(actor.id, body),
    resetEmailSettings: async ({ actor }) => {
      await settings.resetEmail(actor.id);
      return undefined;
    },

    createScimToken: async ({ body, actor }) => scim.mintToken(body.name, actor.id),
    listScimTokens: async () => scim.listTokens(),
    revokeScimToken: async ({ params }) => {
      await scim.revokeToken(params.id);
      return undefined;
    },
    scim: async ({ body }) => {
      const { answer, revoked } = await scim.handle(body);
      for (const user_id of revoked) announceRevoked({ user_id });
      return answer;
    },

    getNetworkSettings: async () => settings.network(),
    updateNetworkSettings: async ({ body, actor, requestId }) => settings.changeNetwork(body, actor, requestId),
  };
}
