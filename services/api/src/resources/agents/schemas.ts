import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';

/** The responses clients read are @brokkr/contracts' (paks.ts, labels.ts). */
export { agentLabelSchema, createAgentResponseSchema, rotateAgentPakResponseSchema } from '@brokkr/contracts';

export const newAgentSchema = z
  .object({
    name: z.string(),
    cluster_name: z.string(),
    generator_ids: z.array(uuid()).nullish().meta({ description: 'Generators the agent is registered with, besides `__system__`' }),
  })
  .meta({ id: 'NewAgent' });

/** Brokkr applies only the string fields it knows and ignores everything else in the object. */
export const agentUpdateSchema = z
  .looseObject({
    name: z.unknown().optional(),
    cluster_name: z.unknown().optional(),
    status: z.unknown().optional(),
  })
  .meta({ id: 'AgentUpdate', description: 'Any JSON object; string `name`, `cluster_name` and `status` are applied' });

export const agentSearchQuery = z.object({
  name: z.unknown().optional().meta({ type: 'string' }),
  cluster_name: z.unknown().optional().meta({ type: 'string' }),
});

export const newAgentLabelSchema = z.object({ agent_id: uuid(), label: z.string() }).meta({ id: 'NewAgentLabel' });

export const agentAnnotationSchema = z
  .object({ id: uuid(), agent_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'AgentAnnotation' });
export const newAgentAnnotationSchema = z
  .object({ agent_id: uuid(), key: z.string(), value: z.string() })
  .meta({ id: 'NewAgentAnnotation' });

export const agentTargetSchema = z.object({ id: uuid(), agent_id: uuid(), stack_id: uuid() }).meta({ id: 'AgentTarget' });
export const newAgentTargetSchema = z.object({ agent_id: uuid(), stack_id: uuid() }).meta({ id: 'NewAgentTarget' });

export const agentTargetParams = z.object({ id: uuid(), stack_id: uuid() });
