import { prepared, type Queryable } from '@brokkr/db';
import { agentsForStacksSql } from '../../targeting/sql/agents-for-stacks.ts';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from './deployment-object-row.ts';

export interface NewDeploymentObject {
  stackId: string;
  yamlContent: string;
  yamlChecksum: string;
  isDeletionMarker: boolean;
}

// The row and the agents to wake in one round trip: who is associated with the stack does not
// depend on the new object, so the subquery (which sees the statement's snapshot) is the same
// answer agentsForStack gives after the INSERT.
const insertStatement = prepared(
  'brokkr_deployment_object_insert_waking',
  `WITH ins AS (
     INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker)
     VALUES ($1, $2, $3, $4) RETURNING ${DEPLOYMENT_OBJECT_COLUMNS}
   )
   SELECT ins.*, ARRAY(${agentsForStacksSql({
     stacks: 'ARRAY[$1::uuid]',
     labels: "'{}'::text[]",
     keys: "'{}'::text[]",
     values: "'{}'::text[]",
     generators: "'{}'::uuid[]",
   })}) AS wake_agent_ids
     FROM ins`,
);

/**
 * sequence_id comes from the table's global BIGSERIAL. Also returns the agents associated with
 * the stack (agentsForStack's answer), whom the caller wakes after commit.
 */
export async function insertDeploymentObject(
  db: Queryable,
  object: NewDeploymentObject,
): Promise<{ row: DeploymentObjectRow; wakeAgentIds: string[] }> {
  const { rows } = await db.query<DeploymentObjectRow & { wake_agent_ids: string[] }>(
    insertStatement([object.stackId, object.yamlContent, object.yamlChecksum, object.isDeletionMarker]),
  );
  const { wake_agent_ids: wakeAgentIds, ...row } = rows[0]!;
  return { row, wakeAgentIds };
}
