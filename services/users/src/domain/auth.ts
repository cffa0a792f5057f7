import { hash, randomBytes } from 'node:crypto';
import { type Actor, forbidden, notFound, type Role, Roles, unauthorized } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Clock } from '@kn/service';
import type { UsersConfig } from '../config.ts';
import type { UsersSchema } from '../db/schema.ts';
import { verifyPassword } from './passwords.ts';
import type { NetworkSettingsStore } from './settings.ts';

const hashToken = (token: string) => hash('sha256', token);
const canActOnBehalf = (roles: readonly string[]) => roles.includes('on_behalf_user') || roles.includes('super_admin');
/** super_admin holds every role ("Admin ... super_admin for everything"). */
export const effectiveRoles = (roles: readonly string[]) => (roles.includes('super_admin') ? [...Roles] : [...roles]) as Actor['roles'];
const mayUseApi = (roles: readonly string[]) => roles.includes('api_user') || roles.includes('super_admin');
/** Roles that permit nothing beyond being a user. */
const GRANT_NOTHING: readonly string[] = ['user', 'manager'] satisfies Role[];
/** Who still signs in with a password where password_sign_in is `administrators`: who can repair single sign-on. */
const ADMINISTRATORS: readonly string[] = ['super_admin', 'settings_admin', 'user_admin'] satisfies Role[];

/** Acting on behalf of someone must never grant more than the technical user holds itself. */
function actFor(technical: readonly string[], target: readonly string[]) {
  if (!canActOnBehalf(technical)) throw forbidden('acting on behalf of another user needs the on_behalf_user role');
  const held: readonly string[] = effectiveRoles(technical);
  const lacking = target.filter((role) => !held.includes(role) && !GRANT_NOTHING.includes(role));
  if (lacking.length) throw forbidden(`the user holds roles you lack (${lacking.join(', ')}): you may not act on their behalf`);
}

/** last_seen (of a user) and last_used (of a web session) are written at most once a minute, not on every request. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export function authDomain(deps: { db: Db<UsersSchema>; config: UsersConfig; clock: Clock; settings: NetworkSettingsStore }) {
  const { db, config, clock } = deps;

  /** A new token, and the ids of the web sessions it ended (the person's oldest beyond web_sessions_per_user). */
  async function issue(userId: number, kind: 'login' | 'on_behalf' | 'session', issuedBy: number | null) {
    const token = randomBytes(32).toString('base64url');
    const now = clock.now();
    const expires = new Date(now.getTime() + config.TOKEN_TTL * 1000);
    const ended = await db.transaction().execute(async (tx) => {
      const values = { user_id: userId, token_hash: hashToken(token), kind, issued_by: issuedBy, expires, last_used: now };
      if (kind !== 'session') {
        await tx.insertInto('tokens').values(values).execute();
        return [];
      }
      // One sign-in of the person at a time: two at once cannot both keep the oldest session.
      await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
      await tx.insertInto('tokens').values(values).execute();
      const cap = (await deps.settings.get()).web_sessions_per_user;
      if (cap === 0) return [];
      const beyond = tx
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', userId)
        .where('kind', '=', 'session')
        .where('revoked', 'is', null)
        .where('expires', '>', now)
        .orderBy('created', 'desc')
        .orderBy('last_used', 'desc')
        .offset(cap);
      const rows = await tx.updateTable('tokens').set({ revoked: now }).where('id', 'in', beyond).returning('id').execute();
      return rows.map((r) => r.id);
    });
    return { token, expires: expires.toISOString(), ended };
  }

  return {
    /**
     * A token for email and password: for the API (role api_user), or for a web session (every
     * user may sign in to the web app; the token is then good only in the gateway's session cookie).
     */
    async login(email: string, password: string, kind: 'login' | 'session' = 'login') {
      const user = await db
        .selectFrom('users')
        .select(['id', 'password_hash', 'roles'])
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
        .where('is_deleted', '=', false)
        .where('is_active', '=', true)
        .executeTakeFirst();
      // verifyPassword spends the same time whether or not the user exists.
      const valid = await verifyPassword(password, user?.password_hash ?? null, config.SCRYPT_COST);
      if (!user || !valid) throw unauthorized('wrong email or password');
      if (kind === 'login' && !mayUseApi(user.roles)) throw forbidden('only users with the api_user role may log in through the API');
      // Judged after the password, as every refusal here: it tells nothing about an address without it.
      if (
        kind === 'session' &&
        (await deps.settings.get()).password_sign_in === 'administrators' &&
        !user.roles.some((role) => ADMINISTRATORS.includes(role))
      )
        throw forbidden('on this network people sign in with single sign-on; only administrators sign in with a password');
      return issue(user.id, kind, null);
    },

    /** A web session for a person the identity provider vouched for (single sign-on: no password). */
    session: (userId: number) => issue(userId, 'session', null),

    async onBehalfToken(userId: number, actor: Actor) {
      const user = await db
        .selectFrom('users')
        .select(['id', 'roles'])
        .where('id', '=', userId)
        .where('is_deleted', '=', false)
        .where('is_active', '=', true)
        .executeTakeFirst();
      if (!user) throw notFound('user');
      actFor(actor.roles, user.roles);
      const { token, expires } = await issue(user.id, 'on_behalf', actor.id);
      return { token, expires };
    },

    async revoke(tokenId: string | null) {
      if (tokenId) await db.updateTable('tokens').set({ revoked: new Date() }).where('id', '=', tokenId).execute();
    },

    /**
     * The gateway's question for every request: whose token is this, and for whom do they act?
     * Roles are read anew each time, so a role taken away stops what it allowed at once. A session
     * token is good only as the web app's session cookie (`session`), and only a session token is.
     */
    async authenticate(token: string, onBehalfOf: { user_id: number } | { email: string } | null, session = false) {
      const row = await db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .leftJoin('users as issuer', (join) =>
          join.onRef('issuer.id', '=', 'tokens.issued_by').on('issuer.is_deleted', '=', false).on('issuer.is_active', '=', true),
        )
        .select([
          'tokens.id as token_id',
          'tokens.expires',
          'tokens.kind',
          'tokens.last_used',
          'users.id',
          'users.roles',
          'users.last_seen',
          'issuer.id as issuer_id',
          'issuer.roles as issuer_roles',
        ])
        .where('tokens.token_hash', '=', hashToken(token))
        .where('tokens.revoked', 'is', null)
        .where('tokens.expires', '>', clock.now())
        .where('users.is_deleted', '=', false)
        .where('users.is_active', '=', true)
        .executeTakeFirst();
      if (!row || (row.kind === 'session') !== session) throw unauthorized();
      const now = clock.now();
      if (session) {
        const idleMinutes = (await deps.settings.get()).web_session_idle_minutes;
        if (idleMinutes > 0 && now.getTime() - row.last_used.getTime() > idleMinutes * 60_000)
          throw unauthorized('the session ended after going unused; sign in again');
        if (now.getTime() - row.last_used.getTime() > LAST_SEEN_RESOLUTION_MS)
          await db.updateTable('tokens').set({ last_used: now }).where('id', '=', row.token_id).execute();
      }
      // An on-behalf token opens the API on the authority of the technical user who had it issued.
      let holder = { id: row.id, roles: row.roles };
      if (row.kind === 'on_behalf') {
        if (row.issuer_id === null || row.issuer_roles === null) throw unauthorized();
        holder = { id: row.issuer_id, roles: row.issuer_roles };
        actFor(holder.roles, row.roles);
      }
      if (!session && !mayUseApi(holder.roles)) throw forbidden('only users with the api_user role may use the API');
      const expires = row.expires.toISOString();
      let actor = { id: row.id, roles: effectiveRoles(row.roles), token_id: row.token_id, token_user_id: holder.id, expires };
      let lastSeen = row.last_seen;
      if (onBehalfOf) {
        if (!canActOnBehalf(row.roles)) throw forbidden('acting on behalf of another user needs the on_behalf_user role');
        let q = db.selectFrom('users').select(['id', 'roles', 'last_seen']).where('is_deleted', '=', false).where('is_active', '=', true);
        q =
          'user_id' in onBehalfOf
            ? q.where('id', '=', onBehalfOf.user_id)
            : q.where((eb) => eb(eb.fn('lower', ['email']), '=', onBehalfOf.email.trim().toLowerCase()));
        const target = await q.executeTakeFirst();
        if (!target) throw notFound('act-on-behalf user');
        actFor(row.roles, target.roles);
        actor = { id: target.id, roles: effectiveRoles(target.roles), token_id: row.token_id, token_user_id: holder.id, expires };
        lastSeen = target.last_seen;
      }
      if (!lastSeen || Date.now() - lastSeen.getTime() > LAST_SEEN_RESOLUTION_MS)
        await db.updateTable('users').set({ last_seen: new Date() }).where('id', '=', actor.id).execute();
      return actor;
    },
  };
}
