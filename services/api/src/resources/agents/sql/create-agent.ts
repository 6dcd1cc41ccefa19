import type { Queryable } from '@brokkr/db';
import { SYSTEM_GENERATOR_NAME } from '../../../bootstrap/sql/first-start.ts';
import { AGENT_COLUMNS, type AgentRow } from '../../../domain/agent-row.ts';

export interface NewAgent {
  name: string;
  clusterName: string;
  pakHash: string;
  /** Generators to register the agent with, besides the system generator. */
  generatorIds: readonly string[];
}

/**
 * Inserts the agent (INACTIVE, the table's default) and registers it with the live system
 * generator and with `generatorIds`: two statements, run in the caller's transaction.
 */
export async function createAgent(tx: Queryable, agent: NewAgent): Promise<AgentRow> {
  const { rows } = await tx.query<AgentRow>(
    `INSERT INTO agents (name, cluster_name, pak_hash) VALUES ($1, $2, $3) RETURNING ${AGENT_COLUMNS}`,
    [agent.name, agent.clusterName, agent.pakHash],
  );
  const row = rows[0]!;
  await tx.query(
    `INSERT INTO agent_generator_registrations (agent_id, generator_id)
     SELECT $1, g.id FROM generators g
      WHERE g.deleted_at IS NULL AND ((g.is_system AND g.name = $3) OR g.id = ANY($2::uuid[]))
     ON CONFLICT (agent_id, generator_id) DO NOTHING`,
    [row.id, agent.generatorIds, SYSTEM_GENERATOR_NAME],
  );
  return row;
}
