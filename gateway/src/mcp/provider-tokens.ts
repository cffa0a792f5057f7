import { type Bus, call } from '@kn/bus';
import { type Actor, AppError, serviceUnavailable, unauthorized, usersOperations } from '@kn/contracts';
import type { Clock } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { Request } from 'express';
import { createLocalJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import { groupsOf, languageOf, namesOf } from '../sso.ts';

/*
 * /mcp with single sign-on (docs/mcp.md, "The company's provider as authorization server"): the
 * provider's own access tokens, JWTs checked here with jose against the provider's published keys:
 * signature, issuer, audience, expiry, and the person through the identity link sign-in records.
 */

/** Public-key signatures only: never `none`, never HS* (whose secret would be the provider's to share, or its public key misused). */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Clocks of the provider and the gateway differ a little: `exp` and `nbf` are given this much either way. */
export const LEEWAY_S = 30;
/** Keys are fetched again after this long even when every token's key is known: a key the provider withdrew stops working. */
const KEYS_MAX_AGE_MS = 10 * 60_000;
/** The least time between two fetches of the keys that tokens with an unknown key cause. */
export const KEYS_FLOOR_MS = 30_000;

/** A bearer value in the form of a JWS (three base64url parts): the API's tokens and the gateway's own are opaque, never this. */
const JWT_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface ProviderTokenOptions {
  bus: Bus;
  logger: Logger;
  clock: Clock;
  /** OIDC_ISSUER, exactly as configured: the only `iss` accepted. */
  issuer: string;
  /** OIDC_MCP_AUDIENCE; empty: the resource's URL. */
  audience: string;
  /** OIDC_LINK_VERIFIED_EMAIL: the provider's `email_verified` is believed. */
  trustVerifiedEmail: boolean;
  timeoutMs: number;
}

/** The provider's keys: discovered from its metadata, kept, fetched again on an unknown key at most every keysFloorMs. */
function providerKeys(options: ProviderTokenOptions) {
  const { issuer, clock, logger } = options;
  const insecure = new URL(issuer).protocol === 'http:';
  const getJson = async (url: string) => {
    const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(options.timeoutMs) });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };
  let jwksUri: Promise<string> | undefined;
  const discover = () => {
    jwksUri ??= getJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`).then((metadata) => {
      if (metadata.issuer !== issuer) throw new Error(`the metadata names the issuer ${String(metadata.issuer)}, not ${issuer}`);
      const uri = String(metadata.jwks_uri ?? '');
      // config.ts allows an http issuer only on this machine; its keys come from where it says, https otherwise.
      if (!URL.canParse(uri) || (new URL(uri).protocol !== 'https:' && !insecure)) throw new Error(`no usable jwks_uri: ${uri}`);
      return uri;
    });
    return jwksUri;
  };
  let keys: { set: ReturnType<typeof createLocalJWKSet>; kids: Set<string | undefined>; at: number } | undefined;
  let loading: Promise<void> | undefined;
  const load = () => {
    loading ??= (async () => {
      const jwks = (await getJson(await discover())) as unknown as JSONWebKeySet;
      if (!Array.isArray(jwks.keys)) throw new Error('the provider published no key set');
      keys = { set: createLocalJWKSet(jwks), kids: new Set(jwks.keys.map((k) => k.kid)), at: clock.now().getTime() };
    })()
      .catch((err: unknown) => {
        jwksUri = undefined;
        logger.warn({ err, issuer }, "the single sign-on provider's keys could not be fetched");
        throw serviceUnavailable('the identity provider cannot be reached; try again');
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return async (kid: string | undefined) => {
    const now = clock.now().getTime();
    const age = keys ? now - keys.at : Number.POSITIVE_INFINITY;
    // A key not seen yet may be the provider's new one (rotation): fetch again, but not more often than the floor,
    // so that tokens with made-up key ids cannot make the gateway fetch on every request.
    if (age >= KEYS_MAX_AGE_MS || (!keys?.kids.has(kid) && age >= KEYS_FLOOR_MS)) await load();
    return keys!.set;
  };
}

/** A refusal of jose's, as the person or operator can tell what failed; undefined when it is not the token's fault. */
function refusalOf(err: unknown): string | undefined {
  if (err instanceof errors.JWTExpired) return 'the access token expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'the access token is not valid yet (nbf)';
    return `the access token's claim ${err.claim} ${err.reason === 'missing' ? 'is missing' : `is not accepted (${err.message})`}`;
  }
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
    return 'the access token is signed with a key the identity provider does not publish';
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the access token's signature does not verify";
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return "the access token's signature algorithm is not accepted";
  if (err instanceof errors.JOSEError) return `the access token is not a well-formed JWT (${err.message})`;
  return undefined;
}

/**
 * The person of an access token of the single sign-on provider: undefined when the value is no JWT
 * (an API token, or one of the gateway's own), a 401 naming the check that failed, else the person
 * the token's `iss` and `sub` are linked to (the users service: a first use does what a first sign-in does).
 */
export function providerTokens(options: ProviderTokenOptions) {
  const keysFor = providerKeys(options);
  return async (req: Request, value: string, resource: string): Promise<Actor | undefined> => {
    if (!JWT_FORM.test(value)) return undefined;
    let claims: JWTPayload;
    try {
      // Checked before any key is looked up: `none` and HS* never reach a verification.
      const { alg, kid } = decodeProtectedHeader(value);
      if (!alg || !ACCEPTED_ALGORITHMS.includes(alg))
        throw unauthorized(`the access token's signature algorithm ${alg ?? '(none)'} is not accepted (${ACCEPTED_ALGORITHMS.join(', ')})`);
      const keys = await keysFor(kid);
      ({ payload: claims } = await jwtVerify(value, keys, {
        issuer: options.issuer,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: LEEWAY_S,
        currentDate: options.clock.now(),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      if (err instanceof AppError) throw err;
      const refusal = refusalOf(err);
      if (refusal === undefined) throw err;
      throw unauthorized(refusal);
    }
    const audience = options.audience || resource;
    // RFC 9068's `aud`; a provider that keeps `aud` for its client ids may name the resource in RFC 8707's `resource`.
    if (![claims.aud ?? [], (claims.resource as string | string[] | undefined) ?? []].flat().includes(audience))
      throw unauthorized(`the access token is not for this resource: its audience (aud) must be ${audience}`);
    const email = typeof claims.email === 'string' && claims.email.trim() ? claims.email.trim() : null;
    const answer = await call(options.bus, 'identityActor', usersOperations.identityActor, {
      actor: null,
      params: undefined,
      query: undefined,
      body: {
        issuer: options.issuer,
        subject: claims.sub!,
        email,
        email_verified: claims.email_verified === true && options.trustVerifiedEmail,
        ...namesOf(claims, email ?? ''),
        language: languageOf(claims.locale),
        groups: groupsOf(claims.groups),
      },
      requestId: req.id,
      url: req.originalUrl,
    } as never).catch((err: unknown) => {
      // The claims break the account's rules (a subject too long, an email address that is none): the token is refused.
      if (err instanceof AppError && err.status === 400) throw unauthorized(`the access token's claims are not usable: ${err.message}`);
      throw err;
    });
    return { id: answer.id, roles: answer.roles, token_id: null };
  };
}
