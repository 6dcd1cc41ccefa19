import type { Queryable } from '@brokkr/db';
import type { RegistrationRow } from './queries.ts';

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
}

/** A pending request as the generator reviews it: who is asking. */
export interface PendingRequestRow extends RegistrationRequestRow {
  agent_name: string;
  cluster_name: string;
}

const REQUEST_COLUMNS = 'id, agent_id, generator_id, requested_at';

/**
 * Records the agent's request; undefined when the agent is already registered or has already
 * asked (the unique pair makes concurrent calls safe).
 */
export async function insertRegistrationRequest(
  tx: Queryable,
  agentId: string,
  generatorId: string,
): Promise<RegistrationRequestRow | undefined> {
  const { rows } = await tx.query<RegistrationRequestRow>(
    `INSERT INTO agent_registration_requests (agent_id, generator_id)
     SELECT $1, $2 WHERE NOT EXISTS (
       SELECT 1 FROM agent_generator_registrations WHERE agent_id = $1 AND generator_id = $2)
     ON CONFLICT (agent_id, generator_id) DO NOTHING
     RETURNING ${REQUEST_COLUMNS}`,
    [agentId, generatorId],
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

/**
 * Turns the pending request into a registration in one statement; undefined when there is no
 * request. A registration an admin made meanwhile is returned as it is.
 */
export async function approveRegistrationRequest(
  tx: Queryable,
  agentId: string,
  generatorId: string,
): Promise<RegistrationRow | undefined> {
  const { rows } = await tx.query<RegistrationRow>(
    `WITH request AS (
       DELETE FROM agent_registration_requests WHERE agent_id = $1 AND generator_id = $2 RETURNING agent_id, generator_id
     )
     INSERT INTO agent_generator_registrations (agent_id, generator_id)
     SELECT agent_id, generator_id FROM request
     ON CONFLICT (agent_id, generator_id) DO UPDATE SET registered_at = agent_generator_registrations.registered_at
     RETURNING id, agent_id, generator_id, registered_at`,
    [agentId, generatorId],
  );
  return rows[0];
}

/** Drops the request (declined, withdrawn or superseded); whether one existed. */
export async function deleteRegistrationRequest(tx: Queryable, agentId: string, generatorId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_registration_requests WHERE agent_id = $1 AND generator_id = $2', [
    agentId,
    generatorId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The live agents waiting for the generator's approval, oldest request first. */
export async function listPendingRequests(db: Queryable, generatorId: string): Promise<PendingRequestRow[]> {
  const { rows } = await db.query<PendingRequestRow>(
    `SELECT q.id, q.agent_id, q.generator_id, q.requested_at, a.name AS agent_name, a.cluster_name
       FROM agent_registration_requests q JOIN agents a ON a.id = q.agent_id
      WHERE q.generator_id = $1 AND a.deleted_at IS NULL
      ORDER BY q.requested_at, q.id`,
    [generatorId],
  );
  return rows;
}
