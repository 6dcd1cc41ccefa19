import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import type { Identity } from '../../auth/identity.ts';
import type { WriteScope } from '../../events/transact.ts';
import { yamlChecksum } from '../../yaml/index.ts';
import {
  DEPLOYMENT_CREATED_KEYS,
  insertDeploymentObject,
  type InsertOutcome,
  type NewDeploymentObject,
} from './sql/create-deployment-object.ts';

// Matches no generator: a caller who is neither admin nor a generator owns no stack.
const NO_GENERATOR = '00000000-0000-0000-0000-000000000000';

/** What the row of any new object needs from the caller. */
export interface ObjectFields {
  stackId: string;
  yamlContent: string;
  isDeletionMarker: boolean;
  caller?: Identity | undefined;
}

/** The row of a plain object, before any check. */
export function newRow(object: ObjectFields): NewDeploymentObject {
  const caller = object.caller;
  return {
    stackId: object.stackId,
    yamlContent: object.yamlContent,
    yamlChecksum: yamlChecksum(object.yamlContent),
    isDeletionMarker: object.isDeletionMarker,
    ownerGeneratorId: caller && !caller.admin ? (caller.generator ?? NO_GENERATOR) : null,
    grantsChecked: false,
    source: null,
    rendered: false,
    layersRevision: null,
    submittedBy: caller ? submitterOf(caller) : null,
  };
}

/** How deployment_objects.submitted_by names a caller (migration 0029). */
export function submitterOf(caller: Identity): string | null {
  return caller.admin ? 'admin' : caller.generator;
}

/**
 * Runs one write: writeOnce (its one statement on the pool) for the plain POST, or the caller's
 * transaction. The confined path calls it twice, each call one statement.
 */
export type WriteRunner = <T>(fn: (w: WriteScope) => Promise<T>) => Promise<T>;

/** The statement, and what it entails when it inserted: its outbox row and the agents to wake. */
export async function insertOnce(w: WriteScope, row: NewDeploymentObject): Promise<InsertOutcome> {
  const event = statementEvent('deployment.created');
  const outcome = await insertDeploymentObject(w.db, row, event);
  if (outcome.inserted) {
    w.inserted(statementOutboxRow(event, outcome.eventData, DEPLOYMENT_CREATED_KEYS));
    // The reason: only this stack got a newer object (the delivery patches answers with it).
    w.notifyAgents(outcome.wakeAgentIds, { stack_id: outcome.row.stack_id, sequence_id: outcome.row.sequence_id });
  }
  return outcome;
}
