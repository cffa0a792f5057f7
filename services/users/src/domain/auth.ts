import { hash, randomBytes } from 'node:crypto';
import { type Actor, forbidden, notFound, Roles, unauthorized } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Clock } from '@kn/service';
import type { UsersConfig } from '../config.ts';
import type { UsersSchema } from '../db/schema.ts';
import { verifyPassword } from './passwords.ts';

const hashToken = (token: string) => hash('sha256', token);
const canActOnBehalf = (roles: readonly string[]) => roles.includes('on_behalf_user') || roles.includes('super_admin');
/** super_admin holds every role ("Admin ... super_admin for everything"). */
const effectiveRoles = (roles: readonly string[]) => (roles.includes('super_admin') ? [...Roles] : [...roles]) as Actor['roles'];

/** last_seen is written at most once a minute per user, not on every request. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export function authDomain(deps: { db: Db<UsersSchema>; config: UsersConfig; clock: Clock }) {
  const { db, config, clock } = deps;

  async function issue(userId: number, kind: 'login' | 'on_behalf', issuedBy: number | null) {
    const token = randomBytes(32).toString('base64url');
    const expires = new Date(clock.now().getTime() + config.TOKEN_TTL * 1000);
    await db
      .insertInto('tokens')
      .values({ user_id: userId, token_hash: hashToken(token), kind, issued_by: issuedBy, expires })
      .execute();
    return { token, expires: expires.toISOString() };
  }

  return {
    async login(email: string, password: string) {
      const user = await db
        .selectFrom('users')
        .select(['id', 'password_hash', 'roles'])
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
        .where('is_deleted', '=', false)
        .executeTakeFirst();
      // verifyPassword spends the same time whether or not the user exists.
      const valid = await verifyPassword(password, user?.password_hash ?? null, config.SCRYPT_COST);
      if (!user || !valid) throw unauthorized('wrong email or password');
      if (!user.roles.includes('api_user') && !user.roles.includes('super_admin'))
        throw forbidden('only users with the api_user role may log in through the API');
      return issue(user.id, 'login', null);
    },

    async onBehalfToken(userId: number, actor: Actor) {
      const user = await db.selectFrom('users').select('id').where('id', '=', userId).where('is_deleted', '=', false).executeTakeFirst();
      if (!user) throw notFound('user');
      return issue(user.id, 'on_behalf', actor.id);
    },

    async revoke(tokenId: string | null) {
      if (tokenId) await db.updateTable('tokens').set({ revoked: new Date() }).where('id', '=', tokenId).execute();
    },

    /** The gateway's question for every request: whose token is this, and for whom do they act? */
    async authenticate(token: string, onBehalfOf: { user_id: number } | { email: string } | null) {
      const row = await db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .select(['tokens.id as token_id', 'tokens.expires', 'users.id', 'users.roles', 'users.last_seen'])
        .where('tokens.token_hash', '=', hashToken(token))
        .where('tokens.revoked', 'is', null)
        .where('tokens.expires', '>', clock.now())
        .where('users.is_deleted', '=', false)
        .executeTakeFirst();
      if (!row) throw unauthorized();
      const expires = row.expires.toISOString();
      let actor = { id: row.id, roles: effectiveRoles(row.roles), token_id: row.token_id, token_user_id: row.id, expires };
      let lastSeen = row.last_seen;
      if (onBehalfOf) {
        if (!canActOnBehalf(row.roles)) throw forbidden('acting on behalf of another user needs the on_behalf_user role');
        let q = db.selectFrom('users').select(['id', 'roles', 'last_seen']).where('is_deleted', '=', false);
        q =
          'user_id' in onBehalfOf
            ? q.where('id', '=', onBehalfOf.user_id)
            : q.where((eb) => eb(eb.fn('lower', ['email']), '=', onBehalfOf.email.trim().toLowerCase()));
        const target = await q.executeTakeFirst();
        if (!target) throw notFound('act-on-behalf user');
        actor = { id: target.id, roles: effectiveRoles(target.roles), token_id: row.token_id, token_user_id: row.id, expires };
        lastSeen = target.last_seen;
      }
      if (!lastSeen || Date.now() - lastSeen.getTime() > LAST_SEEN_RESOLUTION_MS)
        await db.updateTable('users').set({ last_seen: new Date() }).where('id', '=', actor.id).execute();
      return actor;
    },
  };
}
