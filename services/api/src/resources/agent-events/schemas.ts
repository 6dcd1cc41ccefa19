import { z } from 'zod';
import { softDeletableRow, uuid } from '../../http/schemas.ts';

export const agentEventSchema = z
  .object({
    ...softDeletableRow(),
    agent_id: uuid(),
    deployment_object_id: uuid(),
    event_type: z.string(),
    status: z.string(),
    message: z.string().nullable(),
  })
  .meta({ id: 'AgentEvent' });

/** No status validation (Brokkr's agent sends `DEPLOY` and `SUCCESS`/`FAILURE`); lengths are the columns'. */
export const newAgentEventSchema = z
  .object({
    agent_id: uuid(),
    deployment_object_id: uuid(),
    event_type: z.string().meta({ maxLength: 50 }),
    status: z.string().meta({ maxLength: 10 }),
    message: z.string().nullish(),
  })
  .meta({ id: 'NewAgentEvent' });
