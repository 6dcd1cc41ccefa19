import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@brokkr/logger';
import { ApiError, errorBody } from './api-error.ts';
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
  // A database that is down or restarting first: 503 + Retry-After, not a 500 (issue 11).
  return (
    apiErrorFromUnavailableDatabase(err) ??
    apiErrorFromDatabase(err) ??
    (typeof err === 'object' && err !== null ? apiErrorFromHttp(err as HttpErrorLike) : undefined)
  );
}

/** The last middleware: every error becomes `{code, message, details?}`; only our own bugs are 500s. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const apiError = toApiError(err);
    if (!apiError) logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
    else if (apiError instanceof ServiceUnavailableError)
      logger.warn({ err, method: req.method, path: req.path }, 'database unavailable: answered 503');
    const status = apiError?.status ?? 500;
    const body = apiError ? apiError.toJSON() : errorBody('internal_error', 'Internal server error');
    if (res.headersSent) {
      res.end();
      return;
    }
    if (apiError instanceof ServiceUnavailableError) res.set('Retry-After', String(apiError.retryAfterSeconds));
    res.status(status).json(body);
  };
}

export function notFoundHandler(): RequestHandler {
  return (req, res) => {
    res.status(404).json(errorBody('not_found', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`));
  };
}
