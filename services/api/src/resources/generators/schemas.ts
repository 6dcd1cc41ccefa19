import { z } from 'zod';
import { generatorSchema } from '@brokkr/contracts';
import { rfc3339, softDeletableRowInput, timestamp, uuid } from '../../http/schemas.ts';

/** The Generator clients read is @brokkr/contracts' (generators.ts). */
export { generatorSchema };

export const newGeneratorSchema = z.object({ name: z.string(), description: z.string().nullish() }).meta({ id: 'NewGenerator' });

export const generatorWithPakSchema = z.object({ generator: generatorSchema, pak: z.string() }).meta({ id: 'CreateGeneratorResponse' });

/**
 * PUT takes the full object (Brokkr's shape). Only name, description, is_active and
 * last_active_at are written; ids, timestamps and is_system are read-only (docs/compatibility.md).
 */
export const generatorUpdateSchema = z
  .object({
    ...softDeletableRowInput(),
    name: z.string(),
    description: z.string().nullish(),
    last_active_at: rfc3339().nullish(),
    is_active: z.boolean(),
    is_system: z.boolean(),
  })
  .meta({ id: 'GeneratorUpdate' });

export const registrationSchema = z
  .object({ id: uuid(), agent_id: uuid(), generator_id: uuid(), registered_at: timestamp() })
  .meta({ id: 'AgentGeneratorRegistration' });

/** POST /generators/{id}/register: Brokkr's registration plus whether it is in effect yet (docs/security.md). */
export const registrationOutcomeSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    generator_id: uuid(),
    registered_at: timestamp(),
    status: z.enum(['approved', 'pending']).meta({
      description: "`pending`: the agent asked; it gets none of the generator's stacks until the generator or an admin approves",
    }),
  })
  .meta({ id: 'AgentRegistrationOutcome' });

export const registrationRequestSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    generator_id: uuid(),
    requested_at: timestamp(),
    agent_name: z.string(),
    cluster_name: z.string(),
  })
  .meta({ id: 'AgentRegistrationRequest' });

export const registrationRequestParams = z.object({ id: uuid(), agent_id: uuid() });

export const registrationBodySchema = z.object({ agent_id: uuid().nullish() }).optional().meta({ id: 'AgentRegistrationBody' });
