import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { ApiError } from '../errors/api-error.ts';
import { closeAfterAnswer } from './lingering-close.ts';
import { payloadTooLarge } from './read-body.ts';

/**
 * Refuses a request whose declared `Content-Length` is over the body limit at once, before its
 * body is read. The body reader would refuse it too, but only after reading off (and discarding)
 * everything the client sends, so a client declaring 100 MB got its 413 only after uploading
 * 100 MB, if ever. The connection is closed after the answer (gracefully, lingering-close.ts): the
 * unread body makes it unusable.
 * (Node has already refused a malformed Content-Length with a 400, see client-errors.ts.)
 */
export function rejectOversizedBody(limitBytes: number): RequestHandler {
  return (req, res, next) => next(oversizedBody(req, res, limitBytes));
}

/** The 413 for a declared Content-Length over the limit (the connection then closes), else undefined. */
export function oversizedBody(req: IncomingMessage, res: ServerResponse, limitBytes: number): ApiError | undefined {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared <= limitBytes) return undefined;
  closeAfterAnswer(res);
  return payloadTooLarge({ limit_bytes: limitBytes, content_length: declared });
}
