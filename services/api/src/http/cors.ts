import type { RequestHandler } from 'express';

export interface CorsSettings {
  /** Comma list; `*` = any origin. */
  allowedOrigins: string;
  allowedMethods: string;
  allowedHeaders: string;
  maxAgeSeconds: number;
}

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Brokkr's `[cors]` settings for /api/v1; preflights are answered here with 204. */
export function cors(settings: CorsSettings): RequestHandler {
  const origins = list(settings.allowedOrigins);
  const anyOrigin = origins.includes('*');
  const methods = list(settings.allowedMethods).join(', ');
  const headers = list(settings.allowedHeaders).join(', ');
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin && (anyOrigin || origins.includes(origin))) {
      res.set('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
      if (!anyOrigin) res.vary('Origin');
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
        res.set({
          'Access-Control-Allow-Methods': methods,
          'Access-Control-Allow-Headers': headers,
          'Access-Control-Max-Age': String(settings.maxAgeSeconds),
        });
        res.status(204).end();
        return;
      }
    }
    next();
  };
}
