import { Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { DOCS_POLICY, pageHeaders } from './headers.ts';

/** The API reference page (Swagger UI); its links are absolute, so it works at /docs and /docs/. */
const docsPage = (base: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Knowledge network API</title>
<link rel="icon" type="image/svg+xml" href="${base}/docs/favicon.svg">
<link rel="stylesheet" href="${base}/docs/assets/swagger-ui.css">
</head>
<body>
<div id="ui"></div>
<script src="${base}/docs/assets/swagger-ui-bundle.js"></script>
<script src="${base}/docs/docs.js"></script>
</body>
</html>`;

/**
 * Starts Swagger UI on this gateway's document, in a file of its own (the page's policy allows no
 * inline script). No validator badge: it would send the document to validator.swagger.io.
 */
const docsScript = (base: string) =>
  `SwaggerUIBundle({ url: ${JSON.stringify(`${base}/openapi.json`)}, dom_id: '#ui', deepLinking: true, validatorUrl: null });\n`;

/** A small mark for the browser tab: a speech bubble with a question mark. */
const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<path d="M4 4h24a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H13l-7 6v-6H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z" fill="#2b6cb0"/>
<text x="16" y="20" font-family="sans-serif" font-size="16" font-weight="bold" text-anchor="middle" fill="#fff">?</text>
</svg>
`;

/**
 * The files of swagger-ui-dist the page loads, and no others: the package also ships demo pages
 * (index.html, oauth2-redirect.html) that would run here, on the web app's origin, and fetch
 * from other hosts.
 */
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js'];

/** GET `<base>/docs` (and `/docs/`) under the docs page's policy, its script, its favicon and the two Swagger UI files. */
export function docsRoutes(base: string) {
  const router = Router();
  const page = docsPage(base);
  const script = docsScript(base);
  router.get([`${base}/docs`, `${base}/docs/`], (_req, res) => {
    pageHeaders(res, DOCS_POLICY);
    res.type('html').send(page);
  });
  router.get(`${base}/docs/docs.js`, (_req, res) => {
    res.type('js').send(script);
  });
  router.get(`${base}/docs/favicon.svg`, (_req, res) => {
    res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(favicon);
  });
  const dist = getAbsoluteFSPath();
  for (const file of SWAGGER_FILES)
    router.get(`${base}/docs/assets/${file}`, (_req, res) => {
      res.sendFile(file, { root: dist });
    });
  return router;
}
