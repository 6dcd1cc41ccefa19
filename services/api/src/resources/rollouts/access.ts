import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { findRollout, stackGenerator } from './sql/queries.ts';
import type { RolloutRow } from './sql/rollout-row.ts';

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
