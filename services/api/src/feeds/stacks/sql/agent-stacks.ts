import { prepared, type Queryable } from '@brokkr/db';
import { associationPairs } from '../../../domain/association.ts';

/** The live stacks associated with a live agent (hard target, or label/annotation with a registration): the stacks it may report on. */
const statement = prepared(
  'brokkr_cluster_events_agent_stacks',
  `WITH agent AS (SELECT a.id FROM agents a WHERE a.id = $1 AND a.deleted_at IS NULL)
   SELECT DISTINCT p.stack_id FROM (${associationPairs('agent')}) p
     JOIN stacks s ON s.id = p.stack_id AND s.deleted_at IS NULL`,
);

export async function associatedStackIds(db: Queryable, agentId: string): Promise<Set<string>> {
  const { rows } = await db.query<{ stack_id: string }>(statement([agentId]));
  return new Set(rows.map((r) => r.stack_id));
}
