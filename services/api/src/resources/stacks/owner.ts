import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { ApiError, errorKind, raising } from '../../errors/api-error.ts';

/**
 * Who may change a stack's owner (`generator_id`, written by PUT /stacks/{id}): only an admin.
 *
 * A stack's objects are served by label/annotation to the agents registered with its generator:
 * registration is the agent's consent to that generator. Brokkr lets a generator move its own stack
 * to another generator, so G2 could hand a stack to G1 and have G2's objects applied by agents
 * that only ever consented to G1. docs/compatibility.md: we close it; an admin, who
 * controls registrations anyway, can still move stacks, and the audit entry names both owners.
 */
export const stackOwnerChangeDenied = errorKind(403, 'stack_owner_change_denied', "Only an admin can change a stack's generator");

export const requireOwnerKept = raising((identity: Identity, currentOwner: string, requestedOwner: string): void => {
  if (identity.admin || requestedOwner === currentOwner) return;
  throw stackOwnerChangeDenied({ generator_id: currentOwner, requested_generator_id: requestedOwner });
}, stackOwnerChangeDenied);

export interface RequestOrigin {
  identity: Identity;
  stackId: string;
  clientIp: string | null;
  userAgent: string | null;
}

/**
 * Rethrows what failed the update; a denied owner change is audited first (after the rollback,
 * so no transaction waits on the audit stream), as `stack.owner_change_denied` with the error's
 * details (current and requested owner).
 */
export async function auditDeniedOwnerChange(ctx: Pick<ApiContext, 'audit'>, err: unknown, origin: RequestOrigin): Promise<never> {
  if (err instanceof ApiError && err.code === stackOwnerChangeDenied.code) {
    await ctx.audit({
      actor: origin.identity,
      action: 'stack.owner_change_denied',
      resourceType: 'stack',
      resourceId: origin.stackId,
      details: err.details ?? null,
      ipAddress: origin.clientIp,
      userAgent: origin.userAgent,
    });
  }
  throw err;
}

/** `stack.updated` details: the name, and the old and new owner when the owner changed. */
export function stackUpdatedDetails(name: string, oldOwner: string, newOwner: string): Record<string, unknown> {
  return oldOwner === newOwner ? { name } : { name, old_generator_id: oldOwner, new_generator_id: newOwner };
}
