import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@kn/telemetry';
import express, { type Response, Router } from 'express';

/** The pages of the web app (web/src/routes.ts): each answers its index.html, the app draws the rest. */
export const WEB_ROUTES = ['/', '/sign-in', '/ask', '/questions/:id', '/experts', '/notifications', '/settings', '/admin'];

/**
 * What a page of the app may load: its own scripts and styles only (no inline script or style
 * element, nothing of another origin), images also from https (descriptions may show them), and
 * no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function secure(res: Response) {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  });
}

/**
 * The built web app (`pnpm --filter @kn/web build`, WEB_ROOT): its pages answer index.html, its
 * assets (named by their content's hash) are cached for a year. Without a build, the gateway
 * serves the API alone and says so in its log.
 */
export function webRoutes(root: string, logger: Logger) {
  const router = Router();
  const dir = path.resolve(root);
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) {
    logger.warn({ web_root: dir }, 'the web app is not built (pnpm --filter @kn/web build): serving the API only');
    return router;
  }
  const assets = path.join(dir, 'assets');
  const zipped = new Set(existsSync(assets) ? readdirSync(assets).filter((f) => f.endsWith('.gz')) : []);
  // The build gzipped every asset beside it: browsers that take gzip get that file.
  router.get('/assets/:file', (req, res, next) => {
    const file = String(req.params.file);
    if (!zipped.has(`${file}.gz`) || !req.acceptsEncodings('gzip')) return next();
    secure(res);
    res.set({ 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding', 'Cache-Control': 'public, max-age=31536000, immutable' });
    res.type(path.extname(file));
    res.sendFile(path.join(assets, `${file}.gz`));
  });
  router.use(
    '/assets',
    express.static(assets, {
      index: false,
      fallthrough: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => secure(res),
    }),
  );
  router.get(WEB_ROUTES, (_req, res) => {
    secure(res);
    res.set('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
