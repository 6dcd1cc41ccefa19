import type { RequestHandler } from 'express';
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
  return (req, res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared <= limitBytes) {
      next();
      return;
    }
    closeAfterAnswer(res);
    next(payloadTooLarge({ limit_bytes: limitBytes, content_length: declared }));
  };
}
