import { type Actor, AppError, unauthorized } from '@kn/contracts';
import { type Request, Router } from 'express';

export const MCP_PATH = '/mcp';
/** RFC 9728's metadata of the resource at /mcp: the well-known path with the resource's path after it. */
export const MCP_SCOPE = 'mcp';
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

export interface ResourceOptions {
  /** The gateway's public origin as the request reached it (PUBLIC_URL, else the request's). */
  origin: (req: Request) => string;
  /** The authorization servers that issue tokens for the resource (their issuer identifiers). */
  authorizationServers: (req: Request) => string[];
}

/**
 * The issuers /mcp's metadata names, the first the one most clients use: the gateway's own alone
 * without single sign-on; with it, the company's provider first (people sign in and consent where
 * they always do) and ours after it, for clients the provider cannot register, unless `first` says
 * the other way round (OIDC_MCP_FIRST).
 */
export function authorizationServersOf(ours: string, company: string | undefined, first: 'provider' | 'gateway'): string[] {
  if (!company) return [ours];
  return first === 'provider' ? [company, ours] : [ours, company];
}

/**
 * /mcp is an OAuth 2.1 protected resource (RFC 9728, as the MCP specification asks): its metadata
 * names the authorization servers, and a request without a good token is told where to find it.
 */
export function resourceMetadataRoutes(options: ResourceOptions) {
  const router = Router();
  // The bare well-known path too: clients that do not insert the resource's path ask there.
  router.get([RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource'], (req, res) => {
    res.locals.route = RESOURCE_METADATA_PATH;
    res.set('Cache-Control', 'public, max-age=3600').json({
      resource: `${options.origin(req)}${MCP_PATH}`,
      authorization_servers: options.authorizationServers(req),
      bearer_methods_supported: ['header'],
      // The one scope of the resource: everything the person may do through the tools.
      scopes_supported: [MCP_SCOPE],
      resource_name: 'Knowledge network',
      resource_documentation: `${options.origin(req)}/api/v1/docs`,
    });
  });
  return router;
}

/**
 * The caller of an MCP request: a bearer token in the Authorization header only (never the web
 * app's session cookie: an MCP client is not the web app). A refusal is 401 with the
 * WWW-Authenticate challenge that leads a client to the metadata, and from there to sign-in.
 */
export async function mcpCaller(
  req: Request,
  origin: ResourceOptions['origin'],
  authenticate: (req: Request, requestId: string) => Promise<Actor>,
): Promise<Actor> {
  const challenge = (error?: string) =>
    `Bearer resource_metadata="${origin(req)}${RESOURCE_METADATA_PATH}", scope="${MCP_SCOPE}"${error ? `, error="${error}"` : ''}`;
  if (!req.get('authorization')) throw withChallenge(unauthorized('missing token'), challenge());
  try {
    return await authenticate(req, req.id);
  } catch (err) {
    if (err instanceof AppError && err.status === 401) throw withChallenge(err, challenge('invalid_token'));
    throw err;
  }
}

const withChallenge = (err: AppError, value: string) =>
  new AppError(err.status, err.code, err.message, { errors: err.errors, headers: { ...err.headers, 'WWW-Authenticate': value } });
