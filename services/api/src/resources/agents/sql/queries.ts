import type { Queryable } from '@brokkr/db';
import { A_COLUMNS, AGENT_COLUMNS, type AgentRow } from '../../../domain/agent-row.ts';

/**
 * The read-only statements of agents and of their explicit targets (the agent side of targeting;
 * labels and annotations: domain/labels/).
 */

export interface AgentTargetRow {
  id: string;
  agent_id: string;
  stack_id: string;
}

export async function listAgents(db: Queryable): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE deleted_at IS NULL ORDER BY created_at, id`);
  return rows;
}

/** A generator's tenant view: the live agents registered with it. */
export async function listAgentsOfGenerator(db: Queryable, generatorId: string): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${A_COLUMNS} FROM agents a
       JOIN agent_generator_registrations r ON r.agent_id = a.id AND r.generator_id = $1
      WHERE a.deleted_at IS NULL ORDER BY a.created_at, a.id`,
    [generatorId],
  );
  return rows;
}

export async function findGenerator(db: Queryable, generatorId: string): Promise<{ is_system: boolean } | undefined> {
  const { rows } = await db.query<{ is_system: boolean }>('SELECT is_system FROM generators WHERE id = $1 AND deleted_at IS NULL', [
    generatorId,
  ]);
  return rows[0];
}

export async function findAgent(db: Queryable, id: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

export async function findAgentByName(db: Queryable, name: string, clusterName: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM agents WHERE name = $1 AND cluster_name = $2 AND deleted_at IS NULL`,
    [name, clusterName],
  );
  return rows[0];
}

/** The ids among `ids` that name no live generator. */
export async function unknownGeneratorIds(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT x.id FROM unnest($1::uuid[]) AS x(id)
      WHERE NOT EXISTS (SELECT 1 FROM generators g WHERE g.id = x.id AND g.deleted_at IS NULL)`,
    [ids],
  );
  return rows.map((r) => r.id);
}

export async function listTargets(db: Queryable, agentId: string): Promise<AgentTargetRow[]> {
  const { rows } = await db.query<AgentTargetRow>(
    'SELECT id, agent_id, stack_id FROM agent_targets WHERE agent_id = $1 ORDER BY stack_id',
    [agentId],
  );
  return rows;
}

/** What the target create/remove checks need, in one read: the live stack's owner and the agent's consent. */
export async function stackForTargeting(
  db: Queryable,
  stackId: string,
  agentId: string,
): Promise<{ generator_id: string; registered: boolean } | undefined> {
  const { rows } = await db.query<{ generator_id: string; registered: boolean }>(
    `SELECT s.generator_id,
            EXISTS (SELECT 1 FROM agent_generator_registrations r
                     WHERE r.agent_id = $2 AND r.generator_id = s.generator_id) AS registered
       FROM stacks s WHERE s.id = $1 AND s.deleted_at IS NULL`,
    [stackId, agentId],
  );
  return rows[0];
}
