import { isDatabaseUnavailable } from '@brokkr/db';
import { ApiError, type ErrorSpec, type Raises } from '../errors/api-error.ts';

const SPEC: ErrorSpec = { status: 503, code: 'service_unavailable' };
/** Every route can answer it: authenticating any request may need the database (route-errors.ts). */
export const serviceUnavailable: ErrorSpec & Raises = { ...SPEC, raises: [SPEC] };

/** How long a client is asked to wait: about what a PostgreSQL restart or failover takes. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * 503 `service_unavailable` with `Retry-After`: PostgreSQL is restarting, down, out of
 * connections or unreachable. The request was fine and will work again without any change, so
 * it is neither the client's 4xx nor our 500; clients and load balancers retry a 503.
 */
export class ServiceUnavailableError extends ApiError {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor() {
    super(serviceUnavailable.status, serviceUnavailable.code, 'The database is unavailable; retry shortly');
    this.name = 'ServiceUnavailableError';
  }
}

export function apiErrorFromUnavailableDatabase(err: unknown): ServiceUnavailableError | undefined {
  return isDatabaseUnavailable(err) ? new ServiceUnavailableError() : undefined;
}
