import type { Request, RequestHandler } from 'express';
import { errorKind, raising } from '../errors/api-error.ts';
import { readBodyWithin, unsupportedMediaType } from './read-body.ts';
import { loneSurrogatePath } from './well-formed.ts';

/**
 * How a route takes its body:
 * - `json`: `Content-Type: application/json` required (415 otherwise), parsed (400 `invalid_json`),
 *   validated against the route's schema (422 `invalid_request_body`);
 * - `optional-json`: like `json`, but an empty body is `undefined` whatever its content type;
 * - `raw`: the bytes and the content type are handed to the handler, which parses them itself
 *   (YAML uploads, Brokkr's lenient heartbeat body).
 */
export type BodyMode = 'json' | 'optional-json' | 'raw';

export interface RawBody {
  bytes: Buffer;
  /** The media type without parameters, lower case; '' when absent. */
  contentType: string;
}

export function mediaType(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

export const invalidJson = errorKind(400, 'invalid_json', 'Request body is not valid JSON');
// What reading any body can end in (read-body.ts).
export { payloadTooLarge, unreadableBody, unsupportedEncoding } from './read-body.ts';

/** Reads the whole body into a Buffer (every content type), enforcing the size limit (413). */
export function readBody(limitBytes: number): RequestHandler {
  return readBodyWithin(limitBytes);
}

export function bodyBytes(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

export function rawBody(req: Request): RawBody {
  return { bytes: bodyBytes(req), contentType: mediaType(req) };
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw invalidJson({ reason });
  }
}

/** Strings and keys must be well-formed UTF-16: a lone surrogate would be stored as U+FFFD. */
function wellFormed(value: unknown, bytes: Buffer): unknown {
  const path = loneSurrogatePath(value, bytes);
  if (path === undefined) return value;
  throw invalidJson.with('Request body is not valid JSON: a string holds an unpaired UTF-16 surrogate', {
    reason: 'unpaired UTF-16 surrogate',
    path: path || '(body)',
  });
}

/** The parsed JSON body for `json` / `optional-json` routes (before schema validation). */
export const jsonBody = raising(
  function jsonBody(req: Request, mode: 'json' | 'optional-json'): unknown {
    const bytes = bodyBytes(req);
    if (mode === 'optional-json' && bytes.length === 0) return undefined;
    const type = mediaType(req);
    if (!isJsonMediaType(type))
      throw unsupportedMediaType.with('Expected request with `Content-Type: application/json`', { content_type: type || null });
    return wellFormed(parseJson(bytes), bytes);
  },
  unsupportedMediaType,
  invalidJson,
);
