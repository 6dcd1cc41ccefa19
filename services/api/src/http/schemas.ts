import { z } from 'zod';

/**
 * Schema building blocks shared by the route modules. UUIDs are accepted in any version (the
 * database's own check is the 8-4-4-4-12 hex form); anything else is a 400 before SQL runs.
 */
export const uuid = () => z.guid();

/** `{ id }` path parameters. */
export const idParams = z.object({ id: uuid() });

/** Timestamps are RFC 3339 strings on the wire (pg Dates serialize to `...Z`). */
export const timestamp = () => z.string().meta({ format: 'date-time' });

/** Timestamps a client sends back (PUT of a full object): RFC 3339 with an offset. */
export const rfc3339 = () => z.iso.datetime({ offset: true });

/** The id and timestamps every soft-deletable Brokkr row serializes (spread into an object). */
export const softDeletableRow = () => ({
  id: uuid(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted_at: timestamp().nullable(),
});

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
