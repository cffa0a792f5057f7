import { hash } from 'node:crypto';
import { type Bus, call } from '@kn/bus';
import {
  type Actor,
  AUTH_REVOKED_SUBJECT,
  AuthRevoked,
  multipleOnBehalfHeaders,
  unauthorized,
  usersOperations,
  validationError,
} from '@kn/contracts';
import type { Clock } from '@kn/service';
import type { Request } from 'express';
import type { SessionCookie } from './session.ts';

const ON_BEHALF_ID = 'x-on-behalf-of-user-id';
const ON_BEHALF_EMAIL = 'x-on-behalf-of-email';

/** Reads the act-on-behalf header; a second one (the same name twice, or both names) is refused. */
export function onBehalfOf(req: Request): { user_id: number } | { email: string } | null {
  const sent: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name === ON_BEHALF_ID || name === ON_BEHALF_EMAIL) sent.push([name, req.rawHeaders[i + 1].trim()]);
  }
  if (sent.length === 0) return null;
  if (sent.length > 1) throw multipleOnBehalfHeaders();
  const [name, value] = sent[0];
  if (name === ON_BEHALF_EMAIL) {
    if (!value || value.length > 191) throw validationError(`${ON_BEHALF_EMAIL} must be an email address`);
    return { email: value };
  }
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2147483647)
    throw validationError(`${ON_BEHALF_ID} must be a user id`, [
      { path: ON_BEHALF_ID, code: 'invalid_type', message: 'expected a positive integer' },
    ]);
  return { user_id: Number(value) };
}

interface Cached {
  actor: Actor;
  tokenUserId: number;
  until: number;
}

/**
 * Resolves callers through the users service and remembers the answer briefly, so most requests
 * cost one hop instead of two. The users service announces revocations (token revoked, user
 * deleted, roles or password changed) on a core NATS subject and every gateway drops the entries
 * at once; the time limit only bounds the damage of a missed announcement.
 */
export function authenticator(
  bus: Bus,
  options: { ttlMs: number; clock: Clock; sessionOf: SessionCookie['sessionOf']; maxEntries?: number },
) {
  const cache = new Map<string, Cached>();
  const maxEntries = options.maxEntries ?? 50_000;
  const sub = bus.nc.subscribe(bus.subject(AUTH_REVOKED_SUBJECT), {
    callback: (_err, msg) => {
      const parsed = AuthRevoked.safeParse(msg.json());
      if (!parsed.success) return;
      const revoked = parsed.data;
      for (const [key, entry] of cache)
        if (
          'token_id' in revoked
            ? entry.actor.token_id === revoked.token_id
            : entry.actor.id === revoked.user_id || entry.tokenUserId === revoked.user_id
        )
          cache.delete(key);
    },
  });

  return {
    async authenticate(req: Request, requestId: string): Promise<Actor> {
      const onBehalf = onBehalfOf(req);
      const header = req.get('authorization') ?? '';
      // Without an Authorization header, the web app's session cookie (CSRF-checked on writes).
      const session = header ? undefined : options.sessionOf(req);
      const match = session ? [header, session] : /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
      if (!match) throw unauthorized(header ? 'the Authorization header must be "Bearer <token>"' : 'missing token');
      // Keyed by a hash: the gateway's memory holds no usable token.
      const key = hash('sha256', `${match[1]}\n${session ? 'session' : 'bearer'}\n${JSON.stringify(onBehalf)}`, 'base64');
      const hit = cache.get(key);
      if (hit && hit.until > options.clock.now().getTime()) return hit.actor;
      const { token_user_id, expires, ...actor } = await call(bus, 'authenticate', usersOperations.authenticate, {
        actor: null,
        params: undefined,
        query: undefined,
        body: { token: match[1]!, on_behalf_of: onBehalf, session: session !== undefined },
        requestId,
        url: req.originalUrl,
      });
      if (options.ttlMs > 0) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
        cache.set(key, {
          actor,
          tokenUserId: token_user_id,
          until: Math.min(options.clock.now().getTime() + options.ttlMs, Date.parse(expires)),
        });
      }
      return actor;
    },
    stop: () => sub.unsubscribe(),
  };
}
