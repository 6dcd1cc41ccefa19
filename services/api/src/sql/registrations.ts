import type { Queryable } from '@brokkr/db';

export interface RegistrationRow {
  id: string;
  agent_id: string;
  generator_id: string;
  registered_at: Date;
}

const COLUMNS = 'id, agent_id, generator_id, registered_at';

export async function liveAgentExists(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM agents WHERE id = $1 AND deleted_at IS NULL', [agentId]);
  return rowCount === 1;
}

/** undefined when the agent is already registered (the unique pair makes concurrent calls safe). */
export async function insertRegistration(tx: Queryable, agentId: string, generatorId: string): Promise<RegistrationRow | undefined> {
  const { rows } = await tx.query<RegistrationRow>(
    `INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)
     ON CONFLICT (agent_id, generator_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [agentId, generatorId],
  );
  return rows[0];
}

/**
 * Removes the registration and, with it, the agent's explicit targets on the generator's live
 * stacks (they required the registration). Returns whether a registration existed.
 */
export async function deleteRegistration(tx: Queryable, agentId: string, generatorId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_generator_registrations WHERE agent_id = $1 AND generator_id = $2', [
    agentId,
    generatorId,
  ]);
  await tx.query(
    `DELETE FROM agent_targets t USING stacks s
      WHERE t.stack_id = s.id AND t.agent_id = $1 AND s.generator_id = $2 AND s.deleted_at IS NULL`,
    [agentId, generatorId],
  );
  return (rowCount ?? 0) > 0;
}

export async function listRegistrations(db: Queryable, generatorId: string): Promise<RegistrationRow[]> {
  const { rows } = await db.query<RegistrationRow>(
    `SELECT r.id, r.agent_id, r.generator_id, r.registered_at
       FROM agent_generator_registrations r JOIN agents a ON a.id = r.agent_id
      WHERE r.generator_id = $1 AND a.deleted_at IS NULL
      ORDER BY r.registered_at, r.id`,
    [generatorId],
  );
  return rows;
}
