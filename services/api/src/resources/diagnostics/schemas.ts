import { z } from 'zod';
import { longPollWait } from '../../http/schemas.ts';

/** The request and response shapes are @brokkr/contracts' (diagnostics.ts); only the query string is the api's. */
export {
  diagnosticRequestSchema,
  diagnosticResultSchema,
  diagnosticWithResultSchema,
  newDiagnosticRequestSchema,
  submitDiagnosticResultSchema,
} from '@brokkr/contracts';

export const pendingDiagnosticsQuery = z.object({
  wait: longPollWait(
    'Long-poll (extension): when no request is pending, hold the request up to this many seconds ' +
      '(capped by BROKKR__BROKER__LONG_POLL_MAX_SECONDS) until one is',
  ),
});
