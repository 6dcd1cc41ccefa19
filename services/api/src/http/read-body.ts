import type { Request, RequestHandler, Response } from 'express';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { errorKind, raising } from '../errors/api-error.ts';
import { closeAfterAnswer } from './lingering-close.ts';

const DECODERS: Record<string, (() => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress) | undefined> = {
  gzip: zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
};

export const payloadTooLarge = errorKind(413, 'payload_too_large', 'Request body is too large');
/** The one 415: a body in a media type, encoding or charset the route cannot read. */
export const unsupportedMediaType = errorKind(415, 'unsupported_media_type', 'Unsupported media type');
export const unsupportedEncoding = raising(
  (details?: Record<string, unknown>) => unsupportedMediaType.with('Unsupported content encoding or charset', details),
  unsupportedMediaType,
);
export const unreadableBody = errorKind(400, 'invalid_request', 'The request body could not be read');

// type-is's rule, as body-parser used it: a body is announced by either header.
const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;

/** The body as sent (identity) or decompressed; an unknown Content-Encoding is a 415. */
function bodyStream(req: Request): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return req;
  const decoder = DECODERS[encoding]?.();
  if (!decoder) {
    throw unsupportedEncoding({ content_encoding: encoding });
  }
  return req.pipe(decoder);
}

/**
 * Reads the whole body into `req.body` (a Buffer; every content type), at most `limitBytes` of it
 * after decompression. Past the limit the answer is a 413 at once and the connection is closed:
 * express.raw (body-parser) first read off and discarded everything the client kept sending, so a
 * chunked upload without end held the connection for as long as the client liked.
 * (A declared Content-Length over the limit never gets here: body-limit.ts.)
 */
export function readBodyWithin(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req)) {
      next();
      return;
    }
    let source: Readable;
    try {
      source = bodyStream(req);
    } catch (err) {
      next(err);
      return;
    }
    collect({ req, res, source, limitBytes }, next);
  };
}

interface Reading {
  req: Request;
  res: Response;
  /** `req` itself, or its decompressed stream. */
  source: Readable;
  limitBytes: number;
}

function collect({ req, res, source, limitBytes }: Reading, next: (err?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (err?: Error) => {
    if (settled) return;
    settled = true;
    source.off('data', onData);
    if (source !== req) source.destroy();
    if (err) {
      // The rest of the body is dropped as it comes (never paused, so the connection can close
      // gracefully); the connection cannot carry another request.
      req.unpipe();
      req.resume();
      closeAfterAnswer(res);
      next(err);
      return;
    }
    req.body = Buffer.concat(chunks, size);
    next();
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limitBytes) settle(payloadTooLarge({ limit_bytes: limitBytes }));
    else chunks.push(chunk);
  };
  source.on('data', onData);
  source.once('end', () => settle());
  source.once('error', () => settle(unreadableBody()));
  req.once('aborted', () => settle(unreadableBody()));
  req.once('close', () => {
    if (!req.complete) settle(unreadableBody());
  });
}
