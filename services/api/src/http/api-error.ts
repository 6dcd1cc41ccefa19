/**
 * The one error type handlers throw. It always becomes a JSON body `{code, message, details?}`
 * (DESIGN §4: even where Brokkr answers with an empty or plain-text body).
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

/** Shorthands for the statuses handlers use most; the code is always explicit. */
export const badRequest = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(400, code, message, details);
export const forbidden = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(403, code, message, details);
export const notFound = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(404, code, message, details);
export const conflict = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(409, code, message, details);
export const unprocessable = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(422, code, message, details);

export const adminRequired = () => forbidden('admin_required', 'Admin access required');
