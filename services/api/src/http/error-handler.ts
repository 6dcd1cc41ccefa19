import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@brokkr/logger';
import { ApiError, errorBody, type ErrorBody } from '../errors/api-error.ts';
import { apiErrorFromDatabase } from './db-errors.ts';
import { apiErrorFromUnavailableDatabase, ServiceUnavailableError } from './db-unavailable.ts';
import { payloadTooLarge, unreadableBody, unsupportedEncoding } from './body.ts';

interface HttpErrorLike {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

/** Errors raised by express / body reading before our code ran (raw-body's `type` values). */
function apiErrorFromHttp(err: HttpErrorLike): ApiError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return payloadTooLarge();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedEncoding();
    case 'request.aborted':
    case 'request.size.invalid':
      return unreadableBody();
  }
  const status = err.status ?? err.statusCode;
  if (status !== undefined && status >= 400 && status < 500)
    return new ApiError(status, 'invalid_request', 'The request could not be processed');
  return undefined;
}

export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  // A database that is down or restarting first: 503 + Retry-After, not a 500.
  return (
    apiErrorFromUnavailableDatabase(err) ??
    apiErrorFromDatabase(err) ??
    (typeof err === 'object' && err !== null ? apiErrorFromHttp(err as HttpErrorLike) : undefined)
  );
}

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** What an error answers: `{code, message, details?}`; only our own bugs are 500s (and logged). */
export function errorReply(err: unknown, logger: Logger, method: string | undefined, path: string): ErrorReply {
  const apiError = toApiError(err);
  if (!apiError) logger.error({ err, method, path }, 'unhandled error');
  else if (apiError instanceof ServiceUnavailableError) logger.warn({ err, method, path }, 'database unavailable: answered 503');
  return {
    status: apiError?.status ?? 500,
    body: apiError ? apiError.toJSON() : errorBody('internal_error', 'Internal server error'),
    headers: apiError instanceof ServiceUnavailableError ? { 'Retry-After': String(apiError.retryAfterSeconds) } : {},
  };
}

/** The last middleware: every error becomes its errorReply. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const reply = errorReply(err, logger, req.method, req.path);
    if (res.headersSent) {
      res.end();
      return;
    }
    res.set(reply.headers).status(reply.status).json(reply.body);
  };
}

export function notFoundHandler(): RequestHandler {
  return (req, res) => {
    res.status(404).json(errorBody('not_found', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`));
  };
}
