import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { findRollout, stackGenerator } from './sql/queries.ts';
import type { RolloutRow } from './sql/rollout-row.ts';
import { approvalRule } from './approvals.ts';

const rolloutNotFound = errorKind(404, 'rollout_not_found', 'Rollout not found');
const rolloutNotOwned = errorKind(403, 'rollout_not_owned', 'Access denied to this rollout');

/** A rollout is its stack's: an admin or the generator owning the stack (agents never). */
export const fetchOwnedRollout = raising(
  async (db: Queryable, identity: Identity, id: string, lock = false): Promise<RolloutRow> => {
    const row = await findRollout(db, id, lock);
    if (!row) throw rolloutNotFound();
    if (identity.admin) return row;
    if (identity.generator === null || (await stackGenerator(db, row.stack_id)) !== identity.generator) throw rolloutNotOwned();
    return row;
  },
  rolloutNotFound,
  rolloutNotOwned,
);

/**
 * Reading a rollout's approvals: whoever may read the rollout, and the generators its waves name as
 * approvers (they must see what they are asked to approve, and nothing else of the stack).
 */
export const fetchApprovableRollout = raising(
  async (db: Queryable, identity: Identity, id: string): Promise<RolloutRow> => {
    const row = await findRollout(db, id);
    if (!row) throw rolloutNotFound();
    if (identity.admin) return row;
    const generator = identity.generator;
    if (generator === null) throw rolloutNotOwned();
    if (row.policy.waves.some((w) => approvalRule(w).approvers.includes(generator))) return row;
    if ((await stackGenerator(db, row.stack_id)) !== generator) throw rolloutNotOwned();
    return row;
  },
  rolloutNotFound,
  rolloutNotOwned,
);

/** The rollout, locked for an approval (anyone may try: who may approve is the wave's rule, checked next). */
export const fetchRolloutForApproval = raising(async (db: Queryable, id: string): Promise<RolloutRow> => {
  const row = await findRollout(db, id, true);
  if (!row) throw rolloutNotFound();
  return row;
}, rolloutNotFound);
