import type { GrantInput } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { REGISTRATION_COLUMNS, type RegistrationRow } from './queries.ts';

/**
 * An admin's registration, effective at once, with the grant the admin gives (null: the
 * defaults); it settles the agent's pending request, if any (migration 0020). undefined when the
 * agent is already registered (the unique pair makes concurrent calls safe).
 */
export async function insertRegistration(
  tx: Queryable,
  agentId: string,
  generatorId: string,
  grant: GrantInput | null,
): Promise<RegistrationRow | undefined> {
  const { rows } = await tx.query<RegistrationRow>(
    `WITH settled AS (
       DELETE FROM agent_registration_requests WHERE agent_id = $1 AND generator_id = $2
     )
     INSERT INTO agent_generator_registrations (agent_id, generator_id, registration_grant) VALUES ($1, $2, $3)
     ON CONFLICT (agent_id, generator_id) DO NOTHING
     RETURNING ${REGISTRATION_COLUMNS}`,
    [agentId, generatorId, grant],
  );
  return rows[0];
}

/**
 * An admin changes what the generator may place on the agent's cluster (null: back to the
 * defaults). The migration's trigger re-derives which of the agent's registrations are restricted.
 */
export async function updateRegistrationGrant(
  tx: Queryable,
  agentId: string,
  generatorId: string,
  grant: GrantInput | null,
): Promise<RegistrationRow | undefined> {
  const { rows } = await tx.query<RegistrationRow>(
    `UPDATE agent_generator_registrations SET registration_grant = $3
      WHERE agent_id = $1 AND generator_id = $2
      RETURNING ${REGISTRATION_COLUMNS}`,
    [agentId, generatorId, grant],
  );
  return rows[0];
}
