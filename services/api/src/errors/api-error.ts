/**
 * The one error type handlers throw. It always becomes a JSON body `{code, message, details?}`
 * (docs/compatibility.md: even where Brokkr answers with an empty or plain-text body).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toJSON(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return details === undefined ? { code, message } : { code, message, details };
}

/** One error response a route can give, known before anything is thrown (the OpenAPI document lists it). */
export interface ErrorSpec {
  readonly status: number;
  readonly code: string;
}

/** Anything that knows the error responses it can cause: an error kind, a guard, a lookup, a parser. */
export interface Raises {
  readonly raises: readonly ErrorSpec[];
}

/**
 * An error with a fixed status and code. Calling it makes the ApiError to throw; routes list it
 * (or a helper `raising` it) in their `errors`, so the document and the thrown error share one
 * definition.
 */
export interface ErrorKind extends ErrorSpec, Raises {
  (details?: Record<string, unknown>): ApiError;
  /** The same error with a message for this occurrence. */
  with(message: string, details?: Record<string, unknown>): ApiError;
}

export function errorKind(status: number, code: string, message: string): ErrorKind {
  const make = (details?: Record<string, unknown>) => new ApiError(status, code, message, details);
  const withMessage = (text: string, details?: Record<string, unknown>) => new ApiError(status, code, text, details);
  return Object.assign(make, { status, code, raises: [{ status, code }], with: withMessage });
}

/** Marks a helper with the errors it throws, so a route that calls it declares them all at once. */
export function raising<F extends (...args: never[]) => unknown>(fn: F, ...sources: readonly Raises[]): F & Raises {
  return Object.assign(fn, { raises: raisesOf(...sources) });
}

/** The specs of several sources, in order, without repeats. */
export function raisesOf(...sources: readonly Raises[]): ErrorSpec[] {
  const seen = new Map<string, ErrorSpec>();
  for (const spec of sources.flatMap((s) => s.raises)) seen.set(`${spec.status} ${spec.code}`, spec);
  return [...seen.values()];
}

/** Shorthands for errors raised outside routes; route code prefers an `errorKind` (declared). */
export const badRequest = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(400, code, message, details);
export const forbidden = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(403, code, message, details);
export const notFound = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(404, code, message, details);
export const conflict = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(409, code, message, details);
export const unprocessable = (code: string, message: string, details?: Record<string, unknown>) =>
  new ApiError(422, code, message, details);

export const adminRequired = errorKind(403, 'admin_required', 'Admin access required');
