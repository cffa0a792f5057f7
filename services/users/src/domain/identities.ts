import { unauthorized, type usersOperations } from '@kn/contracts';
import { type Db, sql, type Tx } from '@kn/db';
import type { z } from 'zod';
import type { UsersSchema } from '../db/schema.ts';
import { applyGroupRoles } from './groups.ts';
import type { NetworkSettingsStore } from './settings.ts';
import type { UsersDomain } from './users.ts';

type Identity = z.output<typeof usersOperations.startIdentitySession.body>;
type IdentityOfToken = z.output<typeof usersOperations.identityActor.body>;

const deactivated = () => unauthorized('your account is deactivated (by the identity provider): ask an administrator');

/** Single sign-on (docs/sso.md): which account a person of the identity provider signs in to. */
export function identitiesDomain(deps: { db: Db<UsersSchema>; users: UsersDomain; settings: NetworkSettingsStore }) {
  const { db, users, settings } = deps;

  /**
   * The account linked to the identity; else the live account with its email, linked now when
   * the provider verified the address (an unverified one could be anybody's: refused, nothing
   * changed); else an account made now from the provider's claims (just in time).
   */
  /** The live account linked to the identity (a deleted or deactivated one is refused), if one is. */
  async function linkedTo(q: Db<UsersSchema> | Tx<UsersSchema>, identity: { issuer: string; subject: string }) {
    const linked = await q
      .selectFrom('identities')
      .innerJoin('users', 'users.id', 'identities.user_id')
      .select(['users.id', 'users.is_deleted', 'users.is_active', 'users.roles'])
      .where('identities.issuer', '=', identity.issuer)
      .where('identities.subject', '=', identity.subject)
      .executeTakeFirst();
    if (linked?.is_deleted) throw unauthorized('the account of this identity was deleted: ask an administrator');
    if (linked && !linked.is_active) throw deactivated();
    return linked;
  }

  async function find(tx: Tx<UsersSchema>, identity: Identity): Promise<{ userId: number; created: boolean }> {
    const linked = await linkedTo(tx, identity);
    if (linked) return { userId: linked.id, created: false };
    const link = (userId: number) =>
      tx.insertInto('identities').values({ issuer: identity.issuer, subject: identity.subject, user_id: userId }).execute();
    const existing = await tx
      .selectFrom('users')
      .select(['id', 'is_active'])
      .where((eb) => eb(eb.fn('lower', ['email']), '=', identity.email.toLowerCase()))
      .where('is_deleted', '=', false)
      .executeTakeFirst();
    if (existing) {
      if (!identity.email_verified)
        throw unauthorized(
          'an account with this email address exists, and the identity provider has not verified that the address is yours: sign in with your password, or have the provider verify the address',
        );
      if (!existing.is_active) throw deactivated();
      await link(existing.id);
      return { userId: existing.id, created: false };
    }
    const language = identity.language ?? (await settings.get(tx)).default_language;
    const row = await users.create(
      { email: identity.email, firstname: identity.firstname, lastname: identity.lastname, language },
      null,
      tx,
    );
    await link(row.id);
    return { userId: row.id, created: true };
  }

  /**
   * The person's account (see find), with the roles the groups of the `groups` claim give under
   * idp_group_mappings, as SCIM's groups do; `rolesChanged`: the gateways must forget what they
   * cached about the person.
   */
  async function accountOf(identity: Identity): Promise<{ userId: number; created: boolean; rolesChanged: boolean }> {
    return db.transaction().execute(async (tx) => {
      // Two first sign-ins of one person at once (two tabs) make one account, not a conflict.
      await sql`select pg_advisory_xact_lock(hashtext(${`identity\n${identity.issuer}\n${identity.subject}`}))`.execute(tx);
      const { userId, created } = await find(tx, identity);
      if (identity.groups === null) return { userId, created, rolesChanged: false };
      const mappings = (await settings.get(tx)).idp_group_mappings;
      const changed = await applyGroupRoles(tx, [userId], mappings, null, new Map([[userId, identity.groups]]));
      return { userId, created, rolesChanged: changed.length > 0 };
    });
  }

  return {
    accountOf,
    /**
     * The person of an access token (/mcp, docs/mcp.md): the linked account, read without a
     * transaction (every request of an assistant asks); unlinked, what a first sign-in does
     * (accountOf), which needs the email address: a token without one is refused (401), nothing made.
     */
    async actorOf(identity: IdentityOfToken) {
      const linked = await linkedTo(db, identity);
      if (linked) return { userId: linked.id, roles: linked.roles, created: false, rolesChanged: false };
      const { email } = identity;
      if (email === null)
        throw unauthorized(
          'no account of this network is linked to the person of this access token, and the token names no email address: sign in to the web app once with single sign-on, then connect again',
        );
      const account = await accountOf({ ...identity, email });
      const { roles } = await db.selectFrom('users').select('roles').where('id', '=', account.userId).executeTakeFirstOrThrow();
      return { ...account, roles };
    },
  };
}
