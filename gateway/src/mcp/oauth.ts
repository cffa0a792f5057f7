/// <reference path="./oidc-provider.d.ts" />
import { hash, timingSafeEqual } from 'node:crypto';
import { type Bus, call } from '@kn/bus';
import { type Actor, AppError, forbidden, unauthorized, usersOperations } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import Provider, { errors } from 'oidc-provider';
import { pageHeaders } from '../headers.ts';
import { cookieOf, csrfOf, SESSION_COOKIE, type SessionCookie } from '../session.ts';
import { noStore } from '../sso.ts';
import { MCP_PATH, MCP_SCOPE } from './auth.ts';
import { kvAdapter, oauthBuckets, sharedSecrets } from './oauth-store.ts';

/*
 * The gateway as its own OAuth 2.1 authorization server for /mcp (docs/mcp.md): the only one
 * without single sign-on, the fallback beside the company's provider with it (provider-tokens.ts
 * checks that one's tokens). oidc-provider (a certified implementation) with
 * authorization code + PKCE, dynamic client registration and RFC 8414 metadata. The person signs in
 * on the web app's page (the session cookie) and consents on a page of ours; the access tokens
 * are opaque, for the resource /mcp only, and found again in the shared bucket (oauth-store.ts),
 * so that revoking one holds at every instance at once.
 */

export const OAUTH_PATH = '/oauth';
const INTERACTION = `${OAUTH_PATH}/interaction`;
/** RFC 8414's metadata of the issuer `<origin>/oauth`: the well-known path with the issuer's path after it. */
export const AUTHORIZATION_SERVER_METADATA_PATH = `/.well-known/oauth-authorization-server${OAUTH_PATH}`;
/** Issuers of the origins requests named (PUBLIC_URL: one); a bound, so that made-up Host headers cannot fill the memory. */
const MAX_ISSUERS = 16;
/** How many bearer values known not to be ours are remembered (the oldest go first). */
const MAX_REMEMBERED = 50_000;

export const issuerOf = (origin: string) => `${origin}${OAUTH_PATH}`;

export function authorizationServer(options: {
  bus: Bus;
  logger: Logger;
  now: () => number;
  cookie: SessionCookie;
  trustProxy: boolean;
  /** The web app's caller of a request with the session cookie (CSRF-checked on writes). */
  authenticate: (req: Request, requestId: string) => Promise<Actor>;
}) {
  const { bus, cookie } = options;
  const buckets = oauthBuckets(bus);
  const Adapter = kvAdapter(buckets.state, options.now);
  const providers = new Map<string, Promise<Provider>>();
  /** Hashes of bearer values that are none of this server's tokens (API tokens), so that they are looked up once. */
  const notOurs = new Set<string>();

  async function create(origin: string) {
    const resource = `${origin}${MCP_PATH}`;
    const { jwks, cookieKeys } = await sharedSecrets(buckets.keys);
    const provider = new Provider(issuerOf(origin), {
      adapter: Adapter,
      jwks,
      cookies: { keys: cookieKeys },
      findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
      // The resource's scope is one a client may register and ask for (the MCP SDK's client does both).
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf ?? resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
            if (indicator !== resource) throw new errors.InvalidTarget(`the only resource here is ${resource}`);
            return { scope: MCP_SCOPE, audience: resource, accessTokenTTL: 3600, accessTokenFormat: 'opaque' };
          },
        },
      },
      pkce: { required: () => true },
      // An assistant stays connected for as long as its refresh token lasts, not as the sign-in page's session.
      expiresWithSession: async () => false,
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      renderError: async (ctx: { type: string; body: string }, out: { error: string; error_description?: string }) => {
        ctx.type = 'html';
        ctx.body = page('Not connected', `${out.error}: ${out.error_description ?? ''}`);
      },
      interactions: { url: async (_ctx: unknown, interaction: { uid: string }) => `${INTERACTION}/${interaction.uid}` },
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 60,
        IdToken: 3600,
        Interaction: 600,
        Grant: 14 * 86400,
        RefreshToken: 14 * 86400,
        Session: 14 * 86400,
      },
    });
    provider.proxy = options.trustProxy;
    provider.on('server_error', (_ctx, err) => options.logger.error({ err }, 'authorization server error'));
    return provider;
  }

  function providerFor(origin: string): Promise<Provider> {
    let provider = providers.get(origin);
    if (!provider) {
      if (providers.size >= MAX_ISSUERS) providers.delete(providers.keys().next().value as string);
      provider = create(origin);
      provider.catch(() => providers.delete(origin));
      providers.set(origin, provider);
    }
    return provider;
  }

  const router = Router();
  const serve = async (req: Request, res: Response) => (await providerFor(cookie.origin(req))).callback()(req, res);

  // RFC 8414: the provider's metadata (its OpenID Connect discovery document) where OAuth clients look.
  router.get([AUTHORIZATION_SERVER_METADATA_PATH, '/.well-known/oauth-authorization-server'], async (req, res) => {
    res.locals.route = AUTHORIZATION_SERVER_METADATA_PATH;
    req.url = '/.well-known/openid-configuration';
    req.originalUrl = `${OAUTH_PATH}${req.url}`;
    await serve(req, res);
  });

  router.get(`${INTERACTION}/:uid`, async (req, res) => {
    res.locals.route = `${INTERACTION}/:uid`;
    noStore(res);
    const provider = await providerFor(cookie.origin(req));
    const details = await provider.interactionDetails(req, res);
    if (!cookieOf(req, SESSION_COOKIE)) {
      res.redirect(303, `/sign-in?next=${encodeURIComponent(`${INTERACTION}/${details.uid}`)}`);
      return;
    }
    const actor = await options.authenticate(req, req.id);
    const client = await provider.Client.find(details.params.client_id);
    const name = client?.clientName ?? details.params.client_id;
    const token = cookieOf(req, SESSION_COOKIE)!;
    const redirect = URL.canParse(String(details.params.redirect_uri)) ? new URL(String(details.params.redirect_uri)) : undefined;
    // The answer to the form leads on to the client's redirect URI: the page may send it there, nowhere else.
    const target = redirect ? (redirect.origin === 'null' ? redirect.protocol : redirect.origin) : '';
    pageHeaders(res, `default-src 'none'; form-action 'self' ${target}; frame-ancestors 'none'; base-uri 'none'`);
    res
      .type('html')
      .send(
        `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
          `<title>Connect ${escapeHtml(name)}</title><main><h1>Connect ${escapeHtml(name)}?</h1>` +
          `<p><strong>${escapeHtml(name)}</strong> asks to use the knowledge network as you (user ${actor.id}): ` +
          `to search and read what you may read, and to ask, answer, comment, forward and read your notifications in your name.</p>` +
          (redirect
            ? `<p>It will be sent back to <code>${escapeHtml(redirect.origin === 'null' ? redirect.href : redirect.origin)}</code>.</p>`
            : '') +
          `<form method="post" action="${INTERACTION}/${escapeHtml(details.uid)}">` +
          `<input type="hidden" name="csrf" value="${escapeHtml(csrfOf(token))}">` +
          `<button type="submit" name="decision" value="allow">Allow</button> ` +
          `<button type="submit" name="decision" value="deny">Deny</button></form></main></html>`,
      );
  });

  router.post(`${INTERACTION}/:uid`, express.urlencoded({ extended: false, limit: '4kb' }), async (req, res) => {
    res.locals.route = `${INTERACTION}/:uid`;
    noStore(res);
    const provider = await providerFor(cookie.origin(req));
    const details = await provider.interactionDetails(req, res);
    const token = cookieOf(req, SESSION_COOKIE);
    const sent = Buffer.from(String(req.body?.csrf ?? ''));
    const expected = Buffer.from(token ? csrfOf(token) : '');
    if (!token) throw unauthorized('sign in to the web app first');
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw forbidden('the consent form of this session is needed');
    // The form carries the session's CSRF token where the web app's requests carry the header.
    req.headers['x-csrf-token'] = String(req.body.csrf);
    const actor = await options.authenticate(req, req.id);
    if (req.body.decision !== 'allow') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the person declined' });
      return;
    }
    const accountId = String(actor.id);
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    for (const scope of String(details.params.scope ?? '').split(' '))
      if (scope === 'openid' || scope === 'offline_access' || scope === MCP_SCOPE) grant.addOIDCScope(scope);
    grant.addResourceScope(`${cookie.origin(req)}${MCP_PATH}`, MCP_SCOPE);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  });

  router.use(OAUTH_PATH, async (req, res) => {
    res.locals.route = OAUTH_PATH;
    await serve(req, res);
  });

  // A person in a browser reads why; an interaction that expired or was never started is their fault, not ours.
  router.use(INTERACTION, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const known = err instanceof AppError ? err : (err as { statusCode?: number }).statusCode === 400 ? err : undefined;
    if (!known || req.accepts(['json', 'html']) !== 'html') return next(err);
    const status = err instanceof AppError ? err.status : 400;
    res
      .status(status)
      .type('html')
      .send(page('Not connected', (err as Error).message));
  });

  return {
    router,
    /**
     * The person an access token of this server was issued to, for /mcp at this origin; undefined
     * when the token is none of this server's (an API token, say). A token for another resource is refused.
     */
    async actorOf(req: Request, value: string): Promise<Actor | undefined> {
      const origin = cookie.origin(req);
      const key = hash('sha256', value, 'base64url');
      if (notOurs.has(key)) return undefined;
      const token = await (await providerFor(origin)).AccessToken.find(value);
      if (!token) {
        // A value that is not one of our tokens now never becomes one (values are issued once, at random):
        // an API token pays the bucket's lookup once, not on every request.
        if (notOurs.size >= MAX_REMEMBERED) notOurs.delete(notOurs.values().next().value as string);
        notOurs.add(key);
        return undefined;
      }
      if (token.isExpired) return undefined;
      if (![token.aud ?? []].flat().includes(`${origin}${MCP_PATH}`)) throw unauthorized('the access token is not for this resource');
      const id = Number(token.accountId);
      const self = { id, roles: [], token_id: null } as Actor;
      const { items } = await call(bus, 'getUsers', usersOperations.getUsers, {
        actor: self,
        params: undefined,
        query: undefined,
        body: { ids: [id] },
        requestId: req.id,
        url: req.originalUrl,
      });
      const user = items[0];
      if (!user || user.is_deleted || !user.is_active) throw unauthorized('the person of this token can no longer sign in');
      return { id, roles: user.roles ?? [], token_id: null };
    },
  };
}

/** A page for a person in a browser when a connection fails: what went wrong, and what to do. */
const page = (title: string, message: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><h1>${escapeHtml(title)}</h1>` +
  `<p>${escapeHtml(message)}</p><p>Start connecting again from the assistant.</p></html>`;
