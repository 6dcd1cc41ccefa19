import type { GrantInput } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { REGISTRATION_COLUMNS, type RegistrationRow } from './queries.ts';

/**
 * An agent's request to register with a generator (migration 0020): it gives the agent nothing
 * until the generator or an admin approves it, which moves the pair into
 * agent_generator_registrations (the table the association rule reads).
 */
export interface RegistrationRequestRow {
  id: string;
  agent_id: string;
  generator_id: string;
  requested_at: Date;
  /** Who asked, as it was then: the generator approves what it saw. */
  agent_name: string;
  cluster_name: string;
  /** The grant the agent asked for (null: the defaults). */
  registration_grant: GrantInput | null;
}

const REQUEST_COLUMNS = 'id, agent_id, generator_id, requested_at, agent_name, cluster_name, registration_grant';

/**
 * Records the agent's request with its name and cluster as they are now; undefined when the agent
 * is already registered or has already asked (the unique pair makes concurrent calls safe).
 */
export async function insertRegistrationRequest(
  tx: Queryable,
  agentId: string,
  generatorId: string,
  grant: GrantInput | null,
): Promise<RegistrationRequestRow | undefined> {
  const { rows } = await tx.query<RegistrationRequestRow>(
    `INSERT INTO agent_registration_requests (agent_id, generator_id, registration_grant, agent_name, cluster_name)
     SELECT a.id, $2, $3, a.name, a.cluster_name FROM agents a
      WHERE a.id = $1 AND NOT EXISTS (
        SELECT 1 FROM agent_generator_registrations WHERE agent_id = $1 AND generator_id = $2)
     ON CONFLICT (agent_id, generator_id) DO NOTHING
     RETURNING ${REQUEST_COLUMNS}`,
    [agentId, generatorId, grant],
  );
  return rows[0];
}

export async function isRegistered(db: Queryable, agentId: string, generatorId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM agent_generator_registrations WHERE agent_id = $1 AND generator_id = $2', [
    agentId,
    generatorId,
  ]);
  return rowCount === 1;
}

export type Approval = { outcome: 'approved'; registration: RegistrationRow } | { outcome: 'none' } | { outcome: 'stale' };

/**
 * Turns the pending request into a registration with the grant it asked for, in one statement —
 * but only while the agent still has the name and cluster it asked under: a request of an agent
 * renamed since is deleted instead ('stale'), so no one approves an agent posing as another
 * cluster. A registration an admin made meanwhile is returned as it is.
 */
export async function approveRegistrationRequest(tx: Queryable, agentId: string, generatorId: string): Promise<Approval> {
  const { rows } = await tx.query<RegistrationRow & { current: boolean }>(
    `WITH request AS (
       DELETE FROM agent_registration_requests q WHERE q.agent_id = $1 AND q.generator_id = $2
       RETURNING q.agent_id, q.generator_id, q.registration_grant,
                 EXISTS (SELECT 1 FROM agents a WHERE a.id = q.agent_id AND a.name = q.agent_name AND a.cluster_name = q.cluster_name) AS current
     ),
     registered AS (
       INSERT INTO agent_generator_registrations (agent_id, generator_id, registration_grant)
       SELECT agent_id, generator_id, registration_grant FROM request WHERE current
       ON CONFLICT (agent_id, generator_id) DO UPDATE SET registered_at = agent_generator_registrations.registered_at
       RETURNING ${REGISTRATION_COLUMNS}
     )
     SELECT request.current, registered.* FROM request LEFT JOIN registered ON true`,
    [agentId, generatorId],
  );
  const row = rows[0];
  if (!row) return { outcome: 'none' };
  if (!row.current) return { outcome: 'stale' };
  const { current: _, ...registration } = row;
  return { outcome: 'approved', registration };
}

/** Drops the request (declined, withdrawn or superseded); whether one existed. */
export async function deleteRegistrationRequest(tx: Queryable, agentId: string, generatorId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_registration_requests WHERE agent_id = $1 AND generator_id = $2', [
    agentId,
    generatorId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The live agents waiting for the generator's approval, as they asked, oldest request first. */
export async function listPendingRequests(db: Queryable, generatorId: string): Promise<RegistrationRequestRow[]> {
  const { rows } = await db.query<RegistrationRequestRow>(
    `SELECT q.id, q.agent_id, q.generator_id, q.requested_at, q.agent_name, q.cluster_name, q.registration_grant
       FROM agent_registration_requests q JOIN agents a ON a.id = q.agent_id
      WHERE q.generator_id = $1 AND a.deleted_at IS NULL
      ORDER BY q.requested_at, q.id`,
    [generatorId],
  );
  return rows;
}
