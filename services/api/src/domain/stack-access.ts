import type { Queryable } from '@brokkr/db';
import type { Identity } from '../auth/identity.ts';
import { errorKind, raising } from '../errors/api-error.ts';
import { stackNotFound, stackNotOwned } from '../errors/catalogue.ts';
import { agentHasHardTarget, findLiveStack } from './live-stack.ts';
import type { StackRow } from './stack-row.ts';

const stackNotAccessible = errorKind(403, 'stack_not_accessible', 'Access denied to this stack');
export const stackIdMismatch = errorKind(400, 'stack_id_mismatch', 'Stack id in the body does not match the path');

/**
 * Brokkr's `fetch_owned_stack`: the stack must be live (404 `stack_not_found`), then the caller
 * must be an admin or the generator owning it (403 `stack_not_owned`; agents always fail).
 * Inside a transaction, pass `lock` so the stack cannot be deleted or changed before commit.
 */
export const fetchOwnedStack = raising(
  async (db: Queryable, identity: Identity, stackId: string, lock?: 'share' | 'update'): Promise<StackRow> => {
    const stack = await findLiveStack(db, stackId, lock);
    if (!stack) throw stackNotFound();
    if (!identity.admin && identity.generator !== stack.generator_id) throw stackNotOwned();
    return stack;
  },
  stackNotFound,
  stackNotOwned,
);

/**
 * Read access to a stack's labels and annotations: an admin (without any existence check, so an
 * unknown stack simply has no labels), the owning generator, or an agent with an explicit
 * target on the stack (a label or annotation match is not enough).
 */
export const requireStackMetadataReader = raising(
  async (db: Queryable, identity: Identity, stackId: string): Promise<void> => {
    if (identity.admin) return;
    const stack = await findLiveStack(db, stackId);
    if (!stack) throw stackNotFound();
    if (identity.generator !== null && identity.generator === stack.generator_id) return;
    if (identity.agent !== null && (await agentHasHardTarget(db, identity.agent, stackId))) return;
    throw stackNotAccessible();
  },
  stackNotFound,
  stackNotAccessible,
);
