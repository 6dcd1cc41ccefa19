import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import type { WriteScope } from '../../events/transact.ts';
import type { Identity } from '../../auth/identity.ts';
import { yamlChecksum } from '../../yaml/index.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { stackNotFound } from '../../domain/stack-access.ts';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import { DEPLOYMENT_CREATED_KEYS, insertDeploymentObject } from './sql/create-deployment-object.ts';

const stackNotOwned = errorKind(403, 'stack_not_owned', 'Access denied to this stack');
// Matches no generator: a caller who is neither admin nor a generator owns no stack.
const NO_GENERATOR = '00000000-0000-0000-0000-000000000000';

export interface ValidatedDeploymentObject {
  stackId: string;
  /** Already validated (validateDeploymentYaml) and stored exactly as given. */
  yamlContent: string;
  isDeletionMarker: boolean;
  /**
   * Who writes: the stack must then be live and theirs (admin, or the owning generator), checked
   * in the same statement (404 `stack_not_found` / 403 `stack_not_owned`, as fetchOwnedStack).
   * Leave it out when the caller has checked access already; the stack must still be live (404).
   */
  caller?: Identity;
}

/**
 * Everything a new deployment object entails, in ONE statement: the row (with its checksum and
 * the next global sequence_id), its `deployment.created` outbox row, and a wake-up for every agent
 * associated with the stack after commit. The one create function: the plain POST runs it with
 * writeOnce (no BEGIN/COMMIT), template instantiation may run it inside its transaction (a
 * TxScope is a WriteScope). The live stack is locked FOR SHARE until the write commits.
 */
export const storeDeploymentObject = raising(
  async (w: WriteScope, object: ValidatedDeploymentObject): Promise<DeploymentObjectRow> => {
    const event = statementEvent('deployment.created');
    const caller = object.caller;
    const outcome = await insertDeploymentObject(
      w.db,
      {
        stackId: object.stackId,
        yamlContent: object.yamlContent,
        yamlChecksum: yamlChecksum(object.yamlContent),
        isDeletionMarker: object.isDeletionMarker,
        ownerGeneratorId: caller && !caller.admin ? (caller.generator ?? NO_GENERATOR) : null,
      },
      event,
    );
    // Nothing written: no live stack (404), or the caller does not own it (403), as fetchOwnedStack.
    if (!outcome.inserted) throw outcome.stackFound ? stackNotOwned() : stackNotFound();
    w.inserted(statementOutboxRow(event, outcome.eventData, DEPLOYMENT_CREATED_KEYS));
    w.notifyAgents(outcome.wakeAgentIds);
    return outcome.row;
  },
  stackNotFound,
  stackNotOwned,
);
