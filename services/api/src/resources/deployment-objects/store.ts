import type { Identity } from '../../auth/identity.ts';
import { raising } from '../../errors/api-error.ts';
import {
  grantRefused,
  renderFailed,
  rendererBusy,
  rendererUnavailable,
  stackLayersChanged,
  stackNotFound,
  stackNotOwned,
} from '../../errors/catalogue.ts';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import { placementRefusals, refuseMisplaced, submittedObjects } from '../../domain/placement-check.ts';
import { storeRendered, type RenderedObject, type StoreDeps } from './rendered.ts';
import { insertOnce, newRow } from './object-row.ts';
import type { InsertOutcome } from './sql/create-deployment-object.ts';

import type { WriteRunner } from './object-row.ts';
import type { ApiContext } from '../../context.ts';

export type { WriteRunner } from './object-row.ts';

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
  async (deps: StoreDeps, object: ValidatedDeploymentObject | RenderedObject): Promise<DeploymentObjectRow> => {
    if ('source' in object) return storeRendered(deps, object);
    const row = newRow(object);
    let outcome = await deps.write((w) => insertOnce(w, row));
    if (!outcome.inserted && outcome.stackOwned && outcome.confined.length && !outcome.layered) {
      checkPlacements(outcome, object.yamlContent);
      outcome = await deps.write((w) => insertOnce(w, { ...row, grantsChecked: true }));
    }
    // The stack has override layers: each agent gets its own render of this YAML.
    if (!outcome.inserted && outcome.stackOwned && outcome.layered) return storeRendered(deps, { ...object, source: { kind: 'yaml' } });
    // Nothing written: no live stack (404), or the caller does not own it (403), as fetchOwnedStack.
    if (!outcome.inserted) throw outcome.stackFound ? stackNotOwned() : stackNotFound();
    return outcome.row;
  },
  stackNotFound,
  stackNotOwned,
  grantRefused,
  renderFailed,
  rendererUnavailable,
  rendererBusy,
  stackLayersChanged,
);

function checkPlacements(outcome: Extract<InsertOutcome, { inserted: false }>, content: string): void {
  const objects = submittedObjects(content);
  refuseMisplaced(placementRefusals(outcome.confined, () => objects));
}

/** What storing an object needs from the api process: `write` runs one statement (writeOnce, or the caller's transaction). */
export function storeDepsOf(
  ctx: Pick<ApiContext, 'db' | 'transact' | 'rendering'>,
  write: WriteRunner,
  transact: WriteRunner = (fn) => ctx.transact(fn),
): StoreDeps {
  return { write, transact, db: ctx.db.pool, rendering: ctx.rendering };
}
