import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { notFound } from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import express, { Router } from 'express';
import { APP_POLICY, pageHeaders } from './headers.ts';

/** The pages of the web app (web/src/routes.ts): each answers its index.html, the app draws the rest. */
export const WEB_ROUTES = ['/', '/sign-in', '/ask', '/questions/:id', '/users/:id', '/experts', '/notifications', '/settings', '/admin'];

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
    res.set({ 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding', 'Cache-Control': 'public, max-age=31536000, immutable' });
    res.type(path.extname(file));
    res.sendFile(path.join(assets, `${file}.gz`));
  });
  // A file that is not there, or a path that cannot name one (`..`, a NUL), passes on to the 404.
  router.use('/assets', express.static(assets, { index: false, redirect: false, immutable: true, maxAge: '365d' }));
  router.use('/assets', (_req, _res, next) => next(notFound('asset')));
  router.get(WEB_ROUTES, (_req, res) => {
    pageHeaders(res, APP_POLICY);
    res.set('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  // Any other page a browser asks for: the app with a 404, so the person reads its not-found page
  // (with the way back) rather than the API's JSON. Clients of the API (JSON first) get that JSON.
  router.get('/{*rest}', (req, res, next) => {
    if (req.path.startsWith('/api/') || req.accepts(['json', 'html']) !== 'html') return next();
    pageHeaders(res, APP_POLICY);
    res.set('Cache-Control', 'no-cache');
    res.status(404).sendFile(index);
  });
  return router;
}
