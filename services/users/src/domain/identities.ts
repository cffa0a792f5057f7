import { unauthorized, type usersOperations } from '@kn/contracts';
import { type Db, sql } from '@kn/db';
import type { z } from 'zod';
import type { UsersSchema } from '../db/schema.ts';
import type { NetworkSettingsStore } from './settings.ts';
import type { UsersDomain } from './users.ts';

type Identity = z.output<typeof usersOperations.startIdentitySession.body>;

/** Single sign-on (docs/sso.md): which account a person of the identity provider signs in to. */
export function identitiesDomain(deps: { db: Db<UsersSchema>; users: UsersDomain; settings: NetworkSettingsStore }) {
  const { db, users, settings } = deps;
  return {
    /**
     * The account linked to the identity; else the live account with its email, linked now when
     * the provider verified the address (an unverified one could be anybody's: refused, nothing
     * changed); else an account made now from the provider's claims (just in time).
     */
    async accountOf(identity: Identity): Promise<{ userId: number; created: boolean }> {
      return db.transaction().execute(async (tx) => {
        // Two first sign-ins of one person at once (two tabs) make one account, not a conflict.
        await sql`select pg_advisory_xact_lock(hashtext(${`identity\n${identity.issuer}\n${identity.subject}`}))`.execute(tx);
        const linked = await tx
          .selectFrom('identities')
          .innerJoin('users', 'users.id', 'identities.user_id')
          .select(['users.id', 'users.is_deleted'])
          .where('identities.issuer', '=', identity.issuer)
          .where('identities.subject', '=', identity.subject)
          .executeTakeFirst();
        if (linked) {
          if (linked.is_deleted) throw unauthorized('the account of this identity was deleted: ask an administrator');
          return { userId: linked.id, created: false };
        }
        const link = (userId: number) =>
          tx.insertInto('identities').values({ issuer: identity.issuer, subject: identity.subject, user_id: userId }).execute();
        const existing = await tx
          .selectFrom('users')
          .select('id')
          .where((eb) => eb(eb.fn('lower', ['email']), '=', identity.email.toLowerCase()))
          .where('is_deleted', '=', false)
          .executeTakeFirst();
        if (existing) {
          if (!identity.email_verified)
            throw unauthorized(
              'an account with this email address exists, and the identity provider has not verified that the address is yours: sign in with your password, or have the provider verify the address',
            );
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
      });
    },
  };
}
