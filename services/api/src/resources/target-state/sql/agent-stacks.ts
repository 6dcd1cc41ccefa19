import { prepared, type Queryable } from '@brokkr/db';
import type { StackRow } from '../../../domain/stack-row.ts';
import { associationPairs } from '../../../domain/association.ts';

/** GET /agents/{id}/stacks: the live associated stacks, sorted by id (any agent status). */
const AGENT_STACKS_SQL = `
WITH agent AS (SELECT a.id FROM agents a WHERE a.id = $1 AND a.deleted_at IS NULL)
SELECT s.id, s.created_at, s.updated_at, s.deleted_at, s.name, s.description, s.generator_id
  FROM stacks s
 WHERE s.deleted_at IS NULL
   AND s.id IN (SELECT p.stack_id FROM (${associationPairs('agent')}) p)
 ORDER BY s.id`;

const agentStacksStatement = prepared('brokkr_agent_stacks', AGENT_STACKS_SQL);

export async function queryAgentStacks(db: Queryable, agentId: string): Promise<StackRow[]> {
  const { rows } = await db.query<StackRow>(agentStacksStatement([agentId]));
  return rows;
}
