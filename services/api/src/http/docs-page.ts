import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';
import { endpointLabel } from './request-metrics.ts';

/**
 * Interactive API docs: Swagger UI from the installed `swagger-ui-dist` package (no CDN) on the
 * generated OpenAPI document. "Authorize" takes a PAK (the `pak` bearer scheme) and "Try it out"
 * sends it as `Authorization: Bearer …`; it is kept in the page's memory only
 * (`persistAuthorization: false`), never in localStorage.
 */

const SWAGGER_DIR = path.dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')));
/** The only files of the package the page needs (the package also ships a petstore index.html). */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

const INIT_SCRIPT = `window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({
    url: '/docs/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    displayRequestDuration: true,
    filter: true,
    docExpansion: 'list',
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Brokkr API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head><body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body></html>`;

/** `/docs` (and Brokkr's `/swagger-ui`), `/docs/openapi.json`, and the page's assets. */
export function mountApiDocs(app: Express, openapi: () => object): void {
  // Built on first request, not at start: the document (~200 KiB of JSON) would otherwise sit in every api's heap.
  let json: string | undefined;
  app.get('/docs/openapi.json', endpointLabel('/docs/openapi.json'), (_req, res) => {
    json ??= JSON.stringify(openapi());
    res.type('json').send(json);
  });
  app.get(
    ['/docs', '/swagger-ui'],
    endpointLabel('/docs'),
    (_req, res) => void res.type('html').set('Cache-Control', 'no-cache').send(PAGE),
  );
  app.get('/docs/assets/init.js', endpointLabel('/docs/assets'), (_req, res) => void res.type('text/javascript').send(INIT_SCRIPT));
  app.get('/docs/assets/:file', endpointLabel('/docs/assets'), (req: Request, res: Response, next) => {
    const file = String(req.params.file);
    if (!ASSETS.has(file)) return next();
    res.sendFile(path.join(SWAGGER_DIR, file), { maxAge: '1h' });
  });
}
