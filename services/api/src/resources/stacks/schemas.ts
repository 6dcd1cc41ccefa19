import { z } from 'zod';
import { softDeletableRow, softDeletableRowInput, uuid } from '../../http/schemas.ts';

export const stackSchema = z
  .object({
    ...softDeletableRow(),
    name: z.string(),
    description: z.string().nullable(),
    generator_id: uuid(),
  })
  .meta({ id: 'Stack' });

export const newStackSchema = z
  .object({ name: z.string(), description: z.string().nullish(), generator_id: uuid() })
  .meta({ id: 'NewStack' });

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

/** `{ id, label }` path parameters (the label is URL-decoded by the router). */
export const stackLabelParams = z.object({ id: uuid(), label: z.string() });
export const stackAnnotationParams = z.object({ id: uuid(), key: z.string() });
