import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { findDrift } from './sql/queries.ts';
import type { DriftRow } from './sql/drift-row.ts';

export const driftNotReadable = errorKind(403, 'drift_not_readable', 'Drift records are for admins and generators');
const driftRecordNotFound = errorKind(404, 'drift_record_not_found', 'Drift record not found');
const driftRecordNotOwned = errorKind(403, 'drift_record_not_owned', 'Access denied to this drift record');
export const driftNotOpen = errorKind(409, 'drift_not_open', 'Only an open drift record can be accepted');

/** Who accepted a record, as the record keeps it. */
export const actorOf = (identity: Identity) => (identity.admin ? 'admin' : `generator:${identity.generator}`);

/**
 * Whose records a reader sees: an admin every stack's (undefined), a generator its own stacks'.
 * Agents report drift but never read it: a record names objects and values of its stack's tenant.
 */
export const readerScope = raising((identity: Identity): { generatorId?: string } => {
  if (identity.admin) return {};
  if (identity.generator !== null) return { generatorId: identity.generator };
  throw driftNotReadable();
}, driftNotReadable);

/** A record is its stack's: an admin or the generator owning the stack. */
export const fetchOwnedDrift = raising(
  async (db: Queryable, identity: Identity, id: string, lock = false): Promise<DriftRow & { generator_id: string }> => {
    const scope = readerScope(identity);
    const row = await findDrift(db, id, lock);
    if (!row) throw driftRecordNotFound();
    if (scope.generatorId !== undefined && scope.generatorId !== row.generator_id) throw driftRecordNotOwned();
    return row;
  },
  driftRecordNotFound,
  driftRecordNotOwned,
  driftNotReadable,
);
