import { z } from 'zod';
import { generatorSchema, grantInputSchema, grantSchema } from '@brokkr/contracts';
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

const grantField = () =>
  grantSchema.meta({ description: "What the generator may place on the agent's cluster (docs/security.md); the defaults filled in" });

/** Brokkr's registration, plus its grant (an additive field Brokkr's clients ignore). */
export const registrationSchema = z
  .object({ id: uuid(), agent_id: uuid(), generator_id: uuid(), registered_at: timestamp(), grant: grantField() })
  .meta({ id: 'AgentGeneratorRegistration' });

/** POST /generators/{id}/register: Brokkr's registration plus whether it is in effect yet (docs/security.md). */
export const registrationOutcomeSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    generator_id: uuid(),
    registered_at: timestamp(),
    grant: grantField(),
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
    agent_name: z.string().meta({ description: "The agent's name when it asked (a rename since voids the request)" }),
    cluster_name: z.string().meta({ description: "The agent's cluster when it asked" }),
    grant: grantField().meta({ description: 'The grant the agent asked for, which an approval gives' }),
  })
  .meta({ id: 'AgentRegistrationRequest' });

/** A generator and one agent of its registrations or requests. */
export const registrationRequestParams = z.object({ id: uuid(), agent_id: uuid() });

export const registrationBodySchema = z
  .object({
    agent_id: uuid().nullish(),
    grant: grantInputSchema.nullish().meta({
      description:
        "What the generator may place on the agent's cluster; unset fields take the defaults (the whole cluster while the " +
        'generator is the only tenant, else its own namespace; no cluster-scoped kinds; no adoption)',
    }),
  })
  .optional()
  .meta({ id: 'AgentRegistrationBody' });
