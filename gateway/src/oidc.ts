import { hash } from 'node:crypto';
import { type Bus, call, keyValue } from '@kn/bus';
import { AppError, notFound, serviceUnavailable, unauthorized, usersOperations } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import { type NextFunction, type Request, type Response, Router } from 'express';
import * as oidc from 'openid-client';
import type { GatewayConfig } from './config.ts';
import { cookieOf, SESSION_COOKIE, type SessionCookie } from './session.ts';

/*
 * Single sign-on with OpenID Connect (docs/sso.md): the authorization code flow with PKCE, state
 * and nonce, done by openid-client (a certified relying party), which checks the ID token's
 * signature, issuer, audience, expiry and nonce. GET /auth/oidc/start sends the browser to the
 * provider; the provider sends it back to /auth/oidc/callback, which asks the users service for
 * the person's web session (startIdentitySession) and sets the same cookie as a password sign-in.
 */

export const OIDC_PATH = '/auth/oidc';
/** Binds a flow to the browser that started it: a callback in any other browser is refused. */
const FLOW_COOKIE = 'kn_oidc';
const FLOW_TTL_MS = 10 * 60_000;

/** What a started sign-in keeps until its callback, server-side (the browser holds only the state). */
interface Flow {
  nonce: string;
  verifier: string;
  next: string;
}

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

/** The provider's answer failed a check (or the provider refused): the person is not signed in. */
function refused(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (
    err instanceof oidc.ClientError ||
    err instanceof oidc.ResponseBodyError ||
    err instanceof oidc.AuthorizationResponseError ||
    err instanceof oidc.WWWAuthenticateChallengeError
  )
    return unauthorized(`the identity provider's answer was refused: ${detailOf(err)}`);
  return serviceUnavailable('the identity provider cannot be reached; try again');
}

/** What failed, as a person or an operator can tell: the provider's own error, or the claim that failed. */
function detailOf(err: Error): string {
  if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError)
    return `${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  // openid-client wraps oauth4webapi's error, which names the claim or the signature that failed.
  return err.cause instanceof Error ? err.cause.message : err.message;
}

export function oidcRoutes(options: {
  bus: Bus;
  config: GatewayConfig;
  cookie: SessionCookie;
  logger: Logger;
  /** Counts a start against its client's limit (429 beyond): each keeps a flow for 10 minutes. */
  throttle: (req: Request, res: Response) => Promise<void>;
}) {
  const { bus, config, cookie: session, logger } = options;
  const router = Router();
  const issuer = config.OIDC_ISSUER;
  const noStore = (res: Response) => res.set('Cache-Control', 'no-store');

  // What the sign-in page offers: public, so that the page knows before anyone signs in.
  router.get('/', (_req, res) => {
    res.json({ enabled: issuer !== undefined, name: issuer === undefined ? null : config.OIDC_NAME });
  });
  if (issuer === undefined) {
    router.get(['/start', '/callback'], () => {
      throw notFound('single sign-on (not configured)');
    });
    return router;
  }
  if (!config.OIDC_CLIENT_ID) throw new Error('OIDC_ISSUER is set without OIDC_CLIENT_ID');

  // Discovery on first use and again after a failure: the gateway starts while the provider is down.
  let discovered: Promise<oidc.Configuration> | undefined;
  const provider = () => {
    discovered ??= oidc
      .discovery(new URL(issuer), config.OIDC_CLIENT_ID, config.OIDC_CLIENT_SECRET || undefined, undefined, {
        // config.ts allows http only for a provider on this machine.
        // Non-repudiation: the ID token's signature is checked too, not only the TLS of the token endpoint.
        execute: [oidc.enableNonRepudiationChecks, ...(new URL(issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [])],
        timeout: Math.ceil(config.RPC_TIMEOUT_MS / 1000),
      })
      .catch((err) => {
        discovered = undefined;
        logger.warn({ err, issuer }, 'OpenID Connect discovery failed');
        throw serviceUnavailable('the identity provider cannot be reached; try again');
      });
    return discovered;
  };
  // Every gateway instance sees every flow: the callback may reach another instance than the start.
  const flows = keyValue(bus, 'oidc-flows', { ttlMs: FLOW_TTL_MS, memory: true });
  const flowKey = (state: string) => hash('sha256', state, 'base64url');
  const redirectUri = (req: Request) => `${session.origin(req)}${OIDC_PATH}/callback`;
  const flowCookie = (req: Request) => ({ ...session.options(req), sameSite: 'lax' as const, path: OIDC_PATH });

  router.get('/start', async (req, res) => {
    noStore(res);
    await options.throttle(req, res);
    const server = await provider();
    const state = oidc.randomState();
    const flow: Flow = { nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next: pageAfterSignIn(req.query.next) };
    await (await flows()).put(flowKey(state), JSON.stringify(flow));
    const url = oidc.buildAuthorizationUrl(server, {
      redirect_uri: redirectUri(req),
      scope: 'openid email profile',
      state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    });
    // Lax: the provider's redirect back is a navigation from its site, which a Strict cookie would miss.
    res.cookie(FLOW_COOKIE, state, { ...flowCookie(req), maxAge: FLOW_TTL_MS });
    res.redirect(303, url.href);
  });

  /** The flow of the state, taken once: a second callback with it (a replay) finds nothing. */
  async function takeFlow(state: string): Promise<Flow> {
    const kv = await flows();
    const entry = await kv.get(flowKey(state));
    const gone = () => unauthorized('this sign-in expired or was used already: start it again');
    if (entry?.operation !== 'PUT') throw gone();
    // Of two callbacks at once with the same state, one deletes this revision and the other fails.
    const taken = await kv.delete(flowKey(state), { previousSeq: entry.revision }).then(
      () => true,
      () => false,
    );
    if (!taken) throw gone();
    return entry.json<Flow>();
  }

  router.get('/callback', async (req, res) => {
    noStore(res);
    const state = cookieOf(req, FLOW_COOKIE);
    res.clearCookie(FLOW_COOKIE, flowCookie(req));
    if (!state || req.query.state !== state) throw unauthorized('this sign-in was not started in this browser: start it again');
    const flow = await takeFlow(state);
    const server = await provider();
    const current = new URL(redirectUri(req));
    current.search = new URL(req.originalUrl, current).search;
    let claims: oidc.IDToken;
    try {
      const tokens = await oidc.authorizationCodeGrant(server, current, {
        expectedState: state,
        expectedNonce: flow.nonce,
        pkceCodeVerifier: flow.verifier,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (err) {
      throw refused(err);
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (!email) throw unauthorized('the identity provider did not say your email address (scope email): ask its administrator');
    const { firstname, lastname } = namesOf(claims, email);
    const answer = await call(bus, 'startIdentitySession', usersOperations.startIdentitySession, {
      actor: null,
      params: undefined,
      query: undefined,
      body: {
        issuer: claims.iss,
        subject: claims.sub,
        email,
        email_verified: claims.email_verified === true && config.OIDC_LINK_VERIFIED_EMAIL === 'true',
        firstname,
        lastname,
        language: languageOf(claims.locale),
        groups: groupsOf(claims.groups),
      },
      requestId: req.id,
      url: req.originalUrl,
    } as never).catch((err: unknown) => {
      // The claims break the account's rules (an email address that is none, say): the provider's answer is refused.
      if (err instanceof AppError && err.status === 400)
        throw unauthorized(`the identity provider's claims are not usable: ${err.message}`);
      throw err;
    });
    logger.info({ request_id: req.id, user_id: answer.user_id, created: answer.created }, 'signed in through the identity provider');
    res.cookie(SESSION_COOKIE, answer.token, { ...session.options(req), expires: new Date(answer.expires) });
    res.redirect(303, flow.next);
  });

  // A person in a browser gets a page that says what went wrong and leads back; a program the error body.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!(err instanceof AppError) || req.accepts(['json', 'html']) !== 'html') return next(err);
    res
      .status(err.status)
      .type('html')
      .send(
        `<!doctype html><html lang="en"><meta charset="utf-8"><title>Sign-in refused</title>` +
          `<h1>Sign-in refused</h1><p>${escapeHtml(err.message)}</p><p><a href="/sign-in">Back to sign-in</a></p></html>`,
      );
  });
  return router;
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
