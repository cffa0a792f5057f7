import { hash } from 'node:crypto';
import { type Bus, call, keyValue } from '@kn/bus';
import { AppError, notFound, unauthorized, usersOperations } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { GatewayConfig } from './config.ts';
import { SESSION_COOKIE, type SessionCookie } from './session.ts';

/*
 * What every way of single sign-on (OpenID Connect in oidc.ts, SAML in saml.ts; docs/sso.md) does
 * the same: a started sign-in kept server-side until its answer, taken once; the person's web
 * session from the users service (startIdentitySession) in the same cookie as a password sign-in;
 * and a refusal a person in a browser can read.
 */

/** A sign-in's answers are the person's own: no cache keeps them. */
export const noStore = (res: Response) => res.set('Cache-Control', 'no-store');

/**
 * The router of one way to sign in. `GET /` tells the sign-in page whether it is on and under which
 * name (public: the page asks before anyone signs in); while it is off (`name` undefined), its other
 * paths answer 404.
 */
export function signInRouter(name: string | undefined, off: { what: string; paths: string[] }) {
  const router = Router();
  router.get('/', (_req, res) => {
    res.json({ enabled: name !== undefined, name: name ?? null });
  });
  if (name === undefined)
    router.all(off.paths, () => {
      throw notFound(`${off.what} (not configured)`);
    });
  return router;
}

/** How long a started sign-in waits for the provider's answer. */
export const FLOW_TTL_MS = 10 * 60_000;

/**
 * Where `next` may lead after sign-in: a path of this origin, never the sign-in page again; anything
 * else (`//host`, `/\host`, `https://host`) leads to `/`. The same rule as the web app's.
 */
export function pageAfterSignIn(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/')) return '/';
  try {
    const base = 'http://gateway.invalid';
    const url = new URL(next, base);
    if (url.origin === base && !url.pathname.startsWith('/sign-in')) return url.pathname + url.search + url.hash;
  } catch {}
  return '/';
}

/**
 * Started sign-ins of one kind (`oidc`, `saml`), on the gateways' shared key-value bucket: the
 * answer may reach another gateway instance than the start. Keys are hashes of the flow's secret
 * or id, so the bucket holds nothing a browser could replay.
 */
export function flowStore<T>(bus: Bus, kind: string) {
  // One bucket for every kind (the gateway's NATS permissions name it), a key prefix per kind.
  const flows = keyValue(bus, 'oidc-flows', { ttlMs: FLOW_TTL_MS, memory: true });
  const keyOf = (id: string) => `${kind}.${hash('sha256', id, 'base64url')}`;
  const gone = () => unauthorized('this sign-in expired or was used already: start it again');
  return {
    async put(id: string, flow: T) {
      await (await flows()).put(keyOf(id), JSON.stringify(flow));
    },
    /** The flow, if it is there (not taken yet, not expired), left in place. */
    async peek(id: string): Promise<T | undefined> {
      const entry = await (await flows()).get(keyOf(id));
      return entry?.operation === 'PUT' ? entry.json<T>() : undefined;
    },
    /** The flow of `id`, taken once: a second answer with it (a replay) finds nothing (401). */
    async take(id: string): Promise<T> {
      const kv = await flows();
      const entry = await kv.get(keyOf(id));
      if (entry?.operation !== 'PUT') throw gone();
      // Of two answers at once with the same id, one deletes this revision and the other fails.
      const taken = await kv.delete(keyOf(id), { previousSeq: entry.revision }).then(
        () => true,
        () => false,
      );
      if (!taken) throw gone();
      return entry.json<T>();
    },
    /** Remembers `id` once: false when it was remembered before (within FLOW_TTL_MS). */
    async once(id: string): Promise<boolean> {
      return (await flows()).create(keyOf(id), '1').then(
        () => true,
        () => false,
      );
    },
  };
}

/** What a way of single sign-on is mounted with (app.ts). */
export interface SignInOptions {
  bus: Bus;
  config: GatewayConfig;
  cookie: SessionCookie;
  logger: Logger;
  /** Counts a start against its client's limit (429 beyond): each keeps a flow for FLOW_TTL_MS. */
  throttle: (req: Request, res: Response) => Promise<void>;
}

/** What an identity provider said about the person, as the users service takes it. */
export interface Identity {
  issuer: string;
  subject: string;
  email: string;
  email_verified: boolean;
  firstname: string;
  lastname: string;
  language: string | null;
  groups: string[] | null;
}

/**
 * Signs the person in: the users service finds or makes the account (startIdentitySession), the
 * gateway sets the session cookie and sends the browser to `next` (303).
 */
export async function finishSignIn(
  options: { bus: Bus; cookie: SessionCookie; logger: Logger },
  req: Request,
  res: Response,
  identity: Identity,
  next: string,
) {
  const answer = await call(options.bus, 'startIdentitySession', usersOperations.startIdentitySession, {
    actor: null,
    params: undefined,
    query: undefined,
    body: identity,
    requestId: req.id,
    url: req.originalUrl,
  } as never).catch((err: unknown) => {
    // The claims break the account's rules (an email address that is none, say): the provider's answer is refused.
    if (err instanceof AppError && err.status === 400) throw unauthorized(`the identity provider's claims are not usable: ${err.message}`);
    throw err;
  });
  options.logger.info(
    { request_id: req.id, user_id: answer.user_id, created: answer.created, issuer: identity.issuer },
    'signed in through the identity provider',
  );
  res.cookie(SESSION_COOKIE, answer.token, { ...options.cookie.options(req), expires: new Date(answer.expires) });
  res.redirect(303, next);
}

/** A person in a browser gets a page that says what went wrong and leads back; a program the error body. */
export function refusalPage(err: unknown, req: Request, res: Response, next: NextFunction) {
  if (!(err instanceof AppError) || req.accepts(['json', 'html']) !== 'html') return next(err);
  res
    .status(err.status)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>Sign-in refused</title>` +
        `<h1>Sign-in refused</h1><p>${escapeHtml(err.message)}</p><p><a href="/sign-in">Back to sign-in</a></p></html>`,
    );
}

/** The person's names from the standard claims; the email's local part when the provider gives none. */
export function namesOf(claims: Record<string, unknown>, email: string) {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim().slice(0, 191) : '');
  let firstname = text(claims.given_name);
  let lastname = text(claims.family_name);
  if (!firstname && !lastname) {
    const [first = '', ...rest] = text(claims.name).split(/\s+/);
    firstname = first;
    lastname = rest.join(' ');
  }
  return { firstname: firstname || email.split('@')[0]!.slice(0, 191), lastname };
}

/** The `groups` claim (the names of the person's groups, as Keycloak's group mapper and Entra ID send them), or null without one. */
export function groupsOf(claim: unknown): string[] | null {
  if (!Array.isArray(claim)) return null;
  // A group's full path (`/company/engineering`, Keycloak's default) is named by its last part.
  return claim
    .filter((g): g is string => typeof g === 'string')
    .map((g) => g.split('/').filter(Boolean).at(-1) ?? g)
    .slice(0, 1000);
}

/** The language of a BCP 47 `locale` claim (`de-CH` → `de`), or null. */
export function languageOf(locale: unknown): string | null {
  const match = typeof locale === 'string' ? /^([a-z]{2})(?:[-_]|$)/i.exec(locale) : null;
  return match ? match[1]!.toLowerCase() : null;
}
