import { z } from 'zod';
import { softDeletableRow, timestamp } from './wire.ts';

/** Generators (the identities that own stacks) as the hub serves them; clients (the CLI, integrations) read them. */
export const generatorSchema = z
  .object({
    ...softDeletableRow(),
    name: z.string(),
    description: z.string().nullable(),
    last_active_at: timestamp().nullable(),
    is_active: z.boolean(),
    is_system: z.boolean(),
  })
  .meta({ id: 'Generator' });
export type Generator = z.output<typeof generatorSchema>;
