import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The console is plain ES modules (services/api/console/, no build step) plus two tiny libraries
 * served straight from node_modules: preact (rendering, hooks) and htm (JSX-like templates in
 * tagged strings). The browser finds them through an import map in index.html.
 */

/** services/api/console/: two levels up from src/console/ and from dist/console/ alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** URL under /ui/vendor/ → file on disk; these are the only files served from node_modules. */
export const VENDOR_FILES: Record<string, string> = {
  'preact.mjs': fileURLToPath(import.meta.resolve('preact')),
  'hooks.mjs': fileURLToPath(import.meta.resolve('preact/hooks')),
  'htm.mjs': fileURLToPath(import.meta.resolve('htm')),
};

const IMPORT_MAP = JSON.stringify({
  imports: { preact: '/ui/vendor/preact.mjs', 'preact/hooks': '/ui/vendor/hooks.mjs', htm: '/ui/vendor/htm.mjs' },
});

/**
 * Every module of the console, as <link rel="modulepreload">: the browser fetches them all in
 * parallel instead of discovering them import by import (a waterfall as deep as the imports).
 */
function modulePreloads(): string {
  const files = readdirSync(CONSOLE_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.split('\\').join('/'))
    .sort();
  return files.map((f) => `<link rel="modulepreload" href="/ui/app/${f}" />`).join('\n    ');
}

export interface ConsolePage {
  html: string;
  /** Content-Security-Policy: only our own origin, and the one inline script (the import map) by hash. */
  csp: string;
}

/** index.html with the import map filled in, read once at start-up. */
export function consolePage(): ConsolePage {
  const template = readFileSync(new URL('index.html', `file://${CONSOLE_DIR}`), 'utf8');
  const hash = createHash('sha256').update(IMPORT_MAP).digest('base64');
  return {
    html: template
      .replace('<!--IMPORT_MAP-->', `<script type="importmap">${IMPORT_MAP}</script>`)
      .replace('<!--MODULE_PRELOADS-->', modulePreloads()),
    csp: [
      "default-src 'self'",
      `script-src 'self' 'sha256-${hash}'`,
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; '),
  };
}
