import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import type { WriteScope } from '../../events/transact.ts';
import type { Identity } from '../../auth/identity.ts';
import { yamlChecksum } from '../../yaml/index.ts';
import { raising } from '../../errors/api-error.ts';
import { stackNotFound, stackNotOwned } from '../../errors/catalogue.ts';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import { grantRefused, placementRefusals, refusalDetails, submittedObjects } from './placement-check.ts';
import {
  DEPLOYMENT_CREATED_KEYS,
  insertDeploymentObject,
  type InsertOutcome,
  type NewDeploymentObject,
} from './sql/create-deployment-object.ts';

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
 * writeOnce (no BEGIN/COMMIT), template instantiation inside its transaction (WriteRunner). The
 * live stack is locked FOR SHARE until the write commits.
 *
 * When some agent of the stack is confined by its grant, that statement inserts nothing and names
 * those agents; the objects are checked against their grants (422 `grant_refused` listing every
 * refusal) and, when all of them would accept, the statement runs again to insert. The agents
 * enforce the same rule before every apply; this check makes the refusal fail at submit.
 */
export const storeDeploymentObject = raising(
  async (write: WriteRunner, object: ValidatedDeploymentObject): Promise<DeploymentObjectRow> => {
    const caller = object.caller;
    const row: NewDeploymentObject = {
      stackId: object.stackId,
      yamlContent: object.yamlContent,
      yamlChecksum: yamlChecksum(object.yamlContent),
      isDeletionMarker: object.isDeletionMarker,
      ownerGeneratorId: caller && !caller.admin ? (caller.generator ?? NO_GENERATOR) : null,
      grantsChecked: false,
    };
    let outcome = await write((w) => insertOnce(w, row));
    if (!outcome.inserted && outcome.stackOwned && outcome.confined.length) {
      checkPlacements(outcome, object.yamlContent);
      outcome = await write((w) => insertOnce(w, { ...row, grantsChecked: true }));
    }
    // Nothing written: no live stack (404), or the caller does not own it (403), as fetchOwnedStack.
    if (!outcome.inserted) throw outcome.stackFound ? stackNotOwned() : stackNotFound();
    return outcome.row;
  },
  stackNotFound,
  stackNotOwned,
  grantRefused,
);

/**
 * Runs one write: writeOnce (its one statement on the pool) for the plain POST, or the caller's
 * transaction. The confined path calls it twice, each call one statement.
 */
export type WriteRunner = <T>(fn: (w: WriteScope) => Promise<T>) => Promise<T>;

/** The statement, and what it entails when it inserted: its outbox row and the agents to wake. */
async function insertOnce(w: WriteScope, row: NewDeploymentObject): Promise<InsertOutcome> {
  const event = statementEvent('deployment.created');
  const outcome = await insertDeploymentObject(w.db, row, event);
  if (outcome.inserted) {
    w.inserted(statementOutboxRow(event, outcome.eventData, DEPLOYMENT_CREATED_KEYS));
    // The reason: only this stack got a newer object (the delivery patches answers with it).
    w.notifyAgents(outcome.wakeAgentIds, { stack_id: outcome.row.stack_id, sequence_id: outcome.row.sequence_id });
  }
  return outcome;
}

function checkPlacements(outcome: Extract<InsertOutcome, { inserted: false }>, content: string): void {
  const refusals = placementRefusals(outcome.confined, submittedObjects(content));
  const first = refusals[0];
  if (!first) return;
  const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more refusal(s) in details)` : '';
  throw grantRefused.with(`Agent "${first.agent_name}" would refuse ${first.object}: it ${first.reason}${more}`, refusalDetails(refusals));
}
