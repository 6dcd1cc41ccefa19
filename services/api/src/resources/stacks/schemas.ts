import { z } from 'zod';
import { rfc3339, softDeletableRowInput, uuid } from '../../http/schemas.ts';

/** The response shapes clients read are @brokkr/contracts' (stacks.ts, labels.ts). */
export { stackExpirySchema, stackLabelSchema, stackSchema } from '@brokkr/contracts';

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

export const newStackSchema = z
  .object({ name: z.string(), description: z.string().nullish(), generator_id: uuid(), ...expiryFields })
  .meta({ id: 'NewStack' });

/** PUT /stacks/{id}/expiry: exactly one of the two fields. */
export const stackExpiryInputSchema = z.object(expiryFields).meta({ id: 'StackExpiryInput' });

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

/** POST /stacks/{id}/labels takes a bare JSON string, e.g. `"env-prod"`. */
export const newStackLabelSchema = z.string().meta({ id: 'NewStackLabel', example: 'env-prod' });

export const stackAnnotationSchema = z
  .object({ id: uuid(), stack_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'StackAnnotation' });

export const newStackAnnotationSchema = z
  .object({ stack_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'NewStackAnnotation' });
