import { AppError, serviceUnavailable, unauthorized } from '@kn/contracts';
import type { Request } from 'express';
import * as oidc from 'openid-client';
import { cookieOf } from './session.ts';
import {
  FLOW_TTL_MS,
  finishSignIn,
  flowStore,
  groupsOf,
  languageOf,
  namesOf,
  noStore,
  pageAfterSignIn,
  refusalPage,
  type SignInOptions,
  signInRouter,
} from './sso.ts';

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

/** What a started sign-in keeps until its callback, server-side (the browser holds only the state). */
interface Flow {
  nonce: string;
  verifier: string;
  next: string;
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

export function oidcRoutes(options: SignInOptions) {
  const { bus, config, cookie: session, logger } = options;
  const issuer = config.OIDC_ISSUER;
  const router = signInRouter(issuer === undefined ? undefined : config.OIDC_NAME, {
    what: 'single sign-on',
    paths: ['/start', '/callback'],
  });
  if (issuer === undefined) return router;
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
  const flows = flowStore<Flow>(bus, 'oidc');
  const redirectUri = (req: Request) => `${session.origin(req)}${OIDC_PATH}/callback`;
  const flowCookie = (req: Request) => ({ ...session.options(req), sameSite: 'lax' as const, path: OIDC_PATH });

  router.get('/start', async (req, res) => {
    noStore(res);
    await options.throttle(req, res);
    const server = await provider();
    const state = oidc.randomState();
    const flow: Flow = { nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next: pageAfterSignIn(req.query.next) };
    await flows.put(state, flow);
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

  router.get('/callback', async (req, res) => {
    noStore(res);
    const state = cookieOf(req, FLOW_COOKIE);
    res.clearCookie(FLOW_COOKIE, flowCookie(req));
    if (!state || req.query.state !== state) throw unauthorized('this sign-in was not started in this browser: start it again');
    const flow = await flows.take(state);
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
    await finishSignIn(
      { bus, cookie: session, logger },
      req,
      res,
      {
        issuer: claims.iss,
        subject: claims.sub,
        email,
        email_verified: claims.email_verified === true && config.OIDC_LINK_VERIFIED_EMAIL === 'true',
        firstname,
        lastname,
        language: languageOf(claims.locale),
        groups: groupsOf(claims.groups),
      },
      flow.next,
    );
  });

  router.use(refusalPage);
  return router;
}
