import type { TxScope } from '../../events/transact.ts';
import { yamlChecksum } from '../../yaml/index.ts';
import type { DeploymentObjectRow } from './sql/deployment-object-row.ts';
import { insertDeploymentObject } from './sql/create-deployment-object.ts';

export interface ValidatedDeploymentObject {
  stackId: string;
  /** Already validated (validateDeploymentYaml) and stored exactly as given. */
  yamlContent: string;
  isDeletionMarker: boolean;
}

/**
 * Everything a new deployment object entails, inside the caller's transaction: the row (with
 * its checksum and the next global sequence_id), the `deployment.created` event, and a wake-up
 * for every agent associated with the stack. Shared by the plain POST and template instantiation.
 * The caller has checked access and holds the stack (fetchOwnedStack with lock 'share').
 */
export async function storeDeploymentObject(tx: TxScope, object: ValidatedDeploymentObject): Promise<DeploymentObjectRow> {
  const { row, wakeAgentIds } = await insertDeploymentObject(tx.client, {
    stackId: object.stackId,
    yamlContent: object.yamlContent,
    yamlChecksum: yamlChecksum(object.yamlContent),
    isDeletionMarker: object.isDeletionMarker,
  });
  tx.emit('deployment.created', {
    deployment_object_id: row.id,
    stack_id: row.stack_id,
    sequence_id: row.sequence_id,
    created_at: row.created_at.toISOString(),
  });
  // What wakeStackAgents would do, computed by the INSERT itself (one round trip fewer).
  tx.notifyAgents(wakeAgentIds);
  return row;
}
