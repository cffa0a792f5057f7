import { hash, timingSafeEqual } from 'node:crypto';
import { type Bus, call } from '@kn/bus';
import { type Actor, AppError, forbidden, unauthorized, usersOperations } from '@kn/contracts';
import { type Request, type Response, Router } from 'express';
import { jsonBody, parsePart, requireJson } from './request.ts';

/*
 * Web sessions (docs/api.md, "Web sessions"): the web app signs in with email and password at
 * POST /session and the gateway keeps the token it gets from the users service in an HttpOnly,
 * SameSite=Strict cookie (Secure over https), so no script of the page can read a credential. A
 * session token is good only in that cookie, and the cookie is read only when a request has no
 * Authorization header: bearer clients see the API exactly as before. A request that changes
 * something with the cookie must carry the session's CSRF token (X-CSRF-Token, which the page
 * learns from POST or GET /session) and, when the browser names its Origin, come from this origin.
 */

export const SESSION_COOKIE = 'kn_session';
const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The session's CSRF token: derived from the session token, so that only the gateway (which sees
 * the cookie) and the page it told can know it; another site can neither read nor guess it.
 */
export const csrfOf = (token: string) => hash('sha256', `csrf\n${token}`, 'base64url');

export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The web app's session cookie as this gateway reads and writes it. Its origin is PUBLIC_URL's
 * when set, else the one each request names (Host, or X-Forwarded-Host and -Proto from a proxy
 * TRUST_PROXY trusts): a proxy that rewrites Host then needs PUBLIC_URL or X-Forwarded-Host.
 */
export function sessionCookie(options: { publicUrl?: string }) {
  const publicOrigin = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).origin;
  const originOf = (req: Request) => publicOrigin ?? `${req.protocol}://${req.host}`;

  /** A write from another origin is refused; a browser that names no Origin is judged by the CSRF token alone. */
  function sameOrigin(req: Request) {
    const origin = req.get('origin');
    if (origin !== undefined && origin !== originOf(req))
      throw forbidden('a change with the session cookie must come from the web app of this address');
  }

  return {
    sameOrigin,
    /** The web app's origin: PUBLIC_URL's, else the request's. */
    origin: originOf,
    /**
     * The session token of the request's cookie (undefined without one). A request that changes
     * something must carry the session's CSRF token and come from this origin (403 otherwise).
     */
    sessionOf(req: Request): string | undefined {
      const token = cookieOf(req, SESSION_COOKIE);
      if (!token) return undefined;
      if (!/^[A-Za-z0-9_-]{1,512}$/.test(token)) throw unauthorized('the session cookie is malformed');
      if (!SAFE_METHODS.has(req.method)) {
        sameOrigin(req);
        const sent = Buffer.from(req.get(CSRF_HEADER) ?? '');
        const expected = Buffer.from(csrfOf(token));
        if (sent.length !== expected.length || !timingSafeEqual(sent, expected))
          throw forbidden('a change with the session cookie needs the X-CSRF-Token header of the session');
      }
      return token;
    },
    /** Secure when the request came over https, or browsers reach the gateway over https (PUBLIC_URL). */
    options: (req: Request) => ({
      httpOnly: true,
      sameSite: 'strict' as const,
      secure: req.secure || publicOrigin?.startsWith('https:') === true,
      path: '/',
    }),
  };
}
export type SessionCookie = ReturnType<typeof sessionCookie>;

/** POST /session (sign in), GET /session (the CSRF token of the signed-in session), DELETE /session (sign out). */
export function sessionRoutes(options: {
  bus: Bus;
  cookie: SessionCookie;
  authenticate: (req: Request, requestId: string) => Promise<Actor>;
  /** The log-in throttle of POST /auth/login, per client address and email address. */
  loginAttempt: (
    req: Request,
    email: string,
    setHeaders: (headers: Record<string, string>) => void,
  ) => Promise<{ check<T>(run: () => Promise<T>): Promise<T> }>;
}) {
  const { bus, cookie: session } = options;
  const router = Router();
  const request = (req: Request, actor: Actor | null, body: unknown) => ({
    actor,
    params: undefined,
    query: undefined,
    body,
    requestId: req.id,
    url: req.originalUrl,
  });
  const noStore = (res: Response) => res.set('Cache-Control', 'no-store');

  router.post('/', jsonBody('16kb'), async (req, res) => {
    noStore(res);
    // Signing in from another site's form would sign the browser in as someone else.
    session.sameOrigin(req);
    requireJson(req);
    const body = parsePart(usersOperations.startSession.body, req.body ?? {}, 'body')!;
    const attempt = await options.loginAttempt(req, body.email.trim().toLowerCase(), (headers) => res.set(headers));
    const { token, expires } = await attempt.check(() =>
      call(bus, 'startSession', usersOperations.startSession, request(req, null, body) as never),
    );
    res.cookie(SESSION_COOKIE, token, { ...session.options(req), expires: new Date(expires) });
    res.status(201).json({ csrf: csrfOf(token), expires });
  });

  router.get('/', async (req, res) => {
    noStore(res);
    const token = session.sessionOf(req);
    if (!token) throw unauthorized('not signed in');
    const actor = await options.authenticate(req, req.id);
    res.json({ csrf: csrfOf(token), user_id: actor.id });
  });

  router.delete('/', async (req, res) => {
    noStore(res);
    if (session.sessionOf(req)) {
      try {
        const actor = await options.authenticate(req, req.id);
        await call(bus, 'revokeToken', usersOperations.revokeToken, request(req, actor, undefined) as never);
      } catch (err) {
        // An expired or revoked session is signed out already: the cookie goes all the same.
        if (!(err instanceof AppError && err.status === 401)) throw err;
      }
    }
    res.clearCookie(SESSION_COOKIE, session.options(req));
    res.status(204).end();
  });
  return router;
}
