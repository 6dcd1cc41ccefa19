import { z } from 'zod';
import { uuid } from '@brokkr/contracts';

/**
 * Schema building blocks shared by the route modules. The wire primitives (`uuid()` in any
 * version, `timestamp()`, `softDeletableRow()`) are @brokkr/contracts', so the api's shapes and
 * the ones it shares with the agent are built alike; a malformed UUID is a 400 before SQL runs.
 */
export { softDeletableRow, timestamp, uuid } from '@brokkr/contracts';

/** `{ id }` path parameters. */
export const idParams = z.object({ id: uuid() });

/** Timestamps a client sends back (PUT of a full object): RFC 3339 with an offset. */
export const rfc3339 = () => z.iso.datetime({ offset: true });

/** The same fields as a client sends them back in a full-object PUT (read-only, but validated). */
export const softDeletableRowInput = () => ({
  id: uuid(),
  created_at: rfc3339(),
  updated_at: rfc3339(),
  deleted_at: rfc3339().nullish(),
});

export const errorResponse = z
  .object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'ErrorResponse' });

/** Query-string booleans (`true`/`false`). */
export const queryBool = () => z.enum(['true', 'false']).transform((v) => v === 'true');

/** `wait=<seconds>` of the long-poll extensions (capped by BROKKR__BROKER__LONG_POLL_MAX_SECONDS where it is used). */
export const longPollWait = (description: string) =>
  z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number of seconds')
    .optional()
    .meta({ description });
