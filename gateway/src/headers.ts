import type { NextFunction, Request, Response } from 'express';

/** Browser features no page of the gateway uses: no script of one (or of a frame) may ask for them. */
export const PERMISSIONS_POLICY = [
  'accelerometer=()',
  'autoplay=()',
  'camera=()',
  'display-capture=()',
  'geolocation=()',
  'gyroscope=()',
  'magnetometer=()',
  'microphone=()',
  'midi=()',
  'payment=()',
  'usb=()',
].join(', ');

const policy = (directives: Record<string, string>) =>
  Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');

/**
 * What a page of the web app may load: its own scripts and styles only (no inline script or style
 * element, nothing of another origin), images also from https (descriptions may show them), and
 * no framing.
 */
export const APP_POLICY = policy({
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data: https:",
  'connect-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
});

/**
 * The API reference page (Swagger UI): its own scripts and styles only (Swagger UI sets styles
 * through the DOM, which a policy does not stop, and draws images as data: URLs), the OpenAPI
 * document and "Try it out" of this origin only: nothing fetched from another host.
 */
export const DOCS_POLICY = policy({
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
});

/** What answers that are no page may do if a browser shows one as a document (JSON, errors): nothing. */
const NOTHING_POLICY = policy({ 'default-src': "'none'", 'frame-ancestors': "'none'" });

/** A year: browsers that once came over https keep to it (hosts below the gateway's name are not bound). */
const HSTS = 'max-age=31536000';

/**
 * The headers of every answer of the gateway, API and web app alike: no sniffing, no framing,
 * nothing of the answer as a document unless a page sets its own policy (pageHeaders), no window
 * of another origin holding a reference to ours, none of the browser's powerful features, and
 * HSTS when the request came over https (also through a proxy TRUST_PROXY trusts).
 */
export function securityHeaders(req: Request, res: Response, next: NextFunction) {
  res.set({
    'Content-Security-Policy': NOTHING_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': PERMISSIONS_POLICY,
  });
  if (req.secure) res.set('Strict-Transport-Security', HSTS);
  next();
}

/** A page's own policy in place of the one answers that are no page carry. */
export const pageHeaders = (res: Response, contentSecurityPolicy: string) => res.set('Content-Security-Policy', contentSecurityPolicy);
