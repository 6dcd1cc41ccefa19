import type { Queryable } from '@brokkr/db';
import type { RegistrationRow } from './queries.ts';

/**
 * An admin's registration, effective at once; it settles the agent's pending request, if any
 * (migration 0020). undefined when the agent is already registered (the unique pair makes
 * concurrent calls safe).
 */
export async function insertRegistration(tx: Queryable, agentId: string, generatorId: string): Promise<RegistrationRow | undefined> {
  const { rows } = await tx.query<RegistrationRow>(
    `WITH settled AS (
       DELETE FROM agent_registration_requests WHERE agent_id = $1 AND generator_id = $2
     )
     INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)
     ON CONFLICT (agent_id, generator_id) DO NOTHING
     RETURNING id, agent_id, generator_id, registered_at`,
    [agentId, generatorId],
  );
  return rows[0];
}
