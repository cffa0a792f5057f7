import { hash } from 'node:crypto';
import { type Bus, call } from '@kn/bus';
import {
  type Actor,
  AUTH_REVOKED_SUBJECT,
  AuthRevoked,
  Email,
  multipleOnBehalfHeaders,
  patternRegex,
  positiveDecimal,
  unauthorized,
  usersOperations,
  validationError,
} from '@kn/contracts';
import type { Clock } from '@kn/service';
import type { Request } from 'express';
import type { SessionCookie } from './session.ts';

const ON_BEHALF_ID = 'X-On-Behalf-Of-User-Id';
const ON_BEHALF_EMAIL = 'X-On-Behalf-Of-Email';
/** A user id in a header: the decimal digits of 1 to 2147483647 (the OpenAPI document states this pattern). */
export const USER_ID_HEADER_PATTERN = `^(?:${positiveDecimal(2147483647)})$`;
const userIdHeader = patternRegex(USER_ID_HEADER_PATTERN);

/** Reads the act-on-behalf header; a second one (the same name twice, or both names) is refused. */
export function onBehalfOf(req: Request): { user_id: number } | { email: string } | null {
  const sent: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name === ON_BEHALF_ID.toLowerCase() || name === ON_BEHALF_EMAIL.toLowerCase()) sent.push([name, req.rawHeaders[i + 1].trim()]);
  }
  if (sent.length === 0) return null;
  if (sent.length > 1) throw multipleOnBehalfHeaders();
  const [name, value] = sent[0];
  if (name === ON_BEHALF_EMAIL.toLowerCase()) {
    // The rule of every email address of the API (users' own): an empty value, or `0`, is no address.
    const email = Email.safeParse(value);
    if (!email.success)
      throw validationError(`${ON_BEHALF_EMAIL} must be an email address`, [
        { path: ON_BEHALF_EMAIL, code: 'invalid_format', message: 'expected an email address' },
      ]);
    return { email: email.data };
  }
  if (!userIdHeader.test(value))
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
      const header = req.get('authorization') ?? '';
      // Without an Authorization header, the web app's session cookie (CSRF-checked on writes).
      const session = header ? undefined : options.sessionOf(req);
      const match = session ? [header, session] : /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
      if (!match) throw unauthorized(header ? 'the Authorization header must be "Bearer <token>"' : 'missing token');
      // Authentication first: a request without a valid token is 401 whatever else it carries, so a
      // malformed act-on-behalf header is refused only once the token has been checked on its own.
      const credential = { token: match[1]!, session: session !== undefined };
      let onBehalf: ReturnType<typeof onBehalfOf>;
      try {
        onBehalf = onBehalfOf(req);
      } catch (refusal) {
        await resolve(req, requestId, credential, null);
        throw refusal;
      }
      return resolve(req, requestId, credential, onBehalf);
    },
    stop: () => sub.unsubscribe(),
  };

  /** The caller of a token (a session's, when `session`), acting for `onBehalf`; remembered briefly. */
  async function resolve(
    req: Request,
    requestId: string,
    credential: { token: string; session: boolean },
    onBehalf: ReturnType<typeof onBehalfOf>,
  ): Promise<Actor> {
    const { token, session } = credential;
    // Keyed by a hash: the gateway's memory holds no usable token.
    const key = hash('sha256', `${token}\n${session ? 'session' : 'bearer'}\n${JSON.stringify(onBehalf)}`, 'base64');
    const hit = cache.get(key);
    if (hit && hit.until > options.clock.now().getTime()) return hit.actor;
    const { token_user_id, expires, ...actor } = await call(bus, 'authenticate', usersOperations.authenticate, {
      actor: null,
      params: undefined,
      query: undefined,
      body: { token, on_behalf_of: onBehalf, session },
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
  }
}
