import { z } from 'zod';
import { rfc3339, softDeletableRow, softDeletableRowInput, timestamp, uuid } from '../../http/schemas.ts';

/** Longest TTL a stack may be given: one year. */
export const MAX_STACK_TTL_SECONDS = 366 * 24 * 3600;

/** An expiry as a client gives it: an instant, or seconds from now (not both). */
const expiryFields = {
  expires_at: rfc3339().optional().meta({ description: 'Delete the stack at this instant (RFC 3339, in the future)' }),
  ttl_seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_STACK_TTL_SECONDS)
    .optional()
    .meta({ description: 'Delete the stack this many seconds from now' }),
};

export const stackSchema = z
  .object({
    ...softDeletableRow(),
    name: z.string(),
    description: z.string().nullable(),
    generator_id: uuid(),
    expires_at: timestamp().optional().meta({ description: 'Present only when the stack expires (not a Brokkr field)' }),
  })
  .meta({ id: 'Stack' });

export const newStackSchema = z
  .object({ name: z.string(), description: z.string().nullish(), generator_id: uuid(), ...expiryFields })
  .meta({ id: 'NewStack' });

/** PUT /stacks/{id}/expiry: exactly one of the two fields. */
export const stackExpiryInputSchema = z.object(expiryFields).meta({ id: 'StackExpiryInput' });

export const stackExpirySchema = z
  .object({
    stack_id: uuid(),
    expires_at: timestamp().nullable(),
  })
  .meta({ id: 'StackExpiry' });

/**
 * PUT takes the full Stack (Brokkr's shape). name, description (when not null) and generator_id
 * are written; id and the timestamps are read-only (docs/compatibility.md).
 */
export const stackUpdateSchema = z
  .object({
    ...softDeletableRowInput(),
    name: z.string(),
    description: z.string().nullish(),
    generator_id: uuid(),
  })
  .meta({ id: 'StackUpdate' });

export const stackLabelSchema = z.object({ id: uuid(), stack_id: uuid(), label: z.string() }).meta({ id: 'StackLabel' });

/** POST /stacks/{id}/labels takes a bare JSON string, e.g. `"env-prod"`. */
export const newStackLabelSchema = z.string().meta({ id: 'NewStackLabel', example: 'env-prod' });

export const stackAnnotationSchema = z
  .object({ id: uuid(), stack_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'StackAnnotation' });

export const newStackAnnotationSchema = z
  .object({ stack_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'NewStackAnnotation' });
