import type { NextFunction, Request, Response } from 'express';

/** What an MCP client in a browser sends: its token, JSON, the protocol's own headers. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID';
/** What it must read: the challenge that leads to sign-in, the protocol's headers, the rate limit. */
const EXPOSED_HEADERS =
  'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id';

/**
 * CORS for /mcp and the documents that lead to its authorization (docs/mcp.md, "Browser-based
 * clients"): any origin may call them, never with credentials. Nothing there takes a cookie (the
 * session cookie is refused at /mcp), so a page of another origin gets no more than the token it
 * holds already gives it.
 */
export function mcpCors(req: Request, res: Response, next: NextFunction) {
  res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS });
  if (req.method !== 'OPTIONS') return next();
  res.locals.route = req.baseUrl;
  res
    .set({
      'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
      'Access-Control-Allow-Headers': ALLOWED_HEADERS,
      'Access-Control-Max-Age': '86400',
    })
    .status(204)
    .end();
}
