import { z } from 'zod';
import { softDeletableRow, timestamp, uuid } from './wire.ts';

/**
 * Stacks as the hub serves them (Brokkr's Stack, plus our optional expiry). The api answers with
 * these schemas; clients (the CLI, integrations) read them.
 */

export const stackSchema = z
  .object({
    ...softDeletableRow(),
    name: z.string(),
    description: z.string().nullable(),
    generator_id: uuid(),
    expires_at: timestamp().optional().meta({ description: 'Present only when the stack expires (not a Brokkr field)' }),
  })
  .meta({ id: 'Stack' });
export type Stack = z.output<typeof stackSchema>;

/** GET, PUT and DELETE /stacks/{id}/expiry. */
export const stackExpirySchema = z
  .object({
    stack_id: uuid(),
    expires_at: timestamp().nullable(),
  })
  .meta({ id: 'StackExpiry' });
export type StackExpiry = z.output<typeof stackExpirySchema>;
