import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import {
  grantRefused,
  invalidOverride,
  overrideExists,
  renderFailed,
  rendererBusy,
  rendererUnavailable,
  stackLayersChanged,
} from '../../errors/catalogue.ts';
import { changeLayers } from '../../rendering/layer-change.ts';
import { proposeAdded } from '../../rendering/propose-layers.ts';
import { insertOverride } from '../../rendering/sql/overrides.ts';
import { actorOf, driftNotOpen, fetchOwnedDrift } from './access.ts';
import { driftNotKeepable, keepLiveLayer } from './keep-live.ts';
import { markAccepted } from './sql/accept-drift.ts';

/** What accepting as an override may answer besides the record's own errors (a layer change's, keep-live's). */
export const acceptAsOverrideErrors = [
  fetchOwnedStack,
  driftNotKeepable,
  invalidOverride,
  overrideExists,
  renderFailed,
  rendererUnavailable,
  rendererBusy,
  grantRefused,
  stackLayersChanged,
] as const;

/**
 * Accepts an open drift by keeping its live values: an override layer for the record's agent
 * (keep-live.ts), added as any layer is (rendered for every agent of the stack first, refused with
 * 422 when it cannot be, the agents woken), and the record closed as accepted in the same
 * transaction that stores the layer. Audited as `drift.accepted` with the layer's name.
 */
export async function acceptAsOverride(
  ctx: ApiContext,
  identity: Identity,
  id: string,
  request: { clientIp: string | null; userAgent: string | null; note: string | undefined },
): Promise<{ record_id: string; stack_id: string; override: string }> {
  const record = await fetchOwnedDrift(ctx.db.pool, identity, id);
  if (record.state !== 'open') throw driftNotOpen({ state: record.state });
  const layer = keepLiveLayer(record);
  const stack = await fetchOwnedStack(ctx.db.pool, identity, record.stack_id);
  await changeLayers(ctx, stack, {
    propose: (current) => proposeAdded(current, layer),
    persist: async (tx) => {
      if (!(await markAccepted(tx.client, record.id, actorOf(identity)))) throw driftNotOpen();
      await insertOverride(tx.client, stack.id, layer);
    },
  });
  await ctx.audit({
    actor: identity,
    action: 'drift.accepted',
    resourceType: 'stack',
    resourceId: stack.id,
    details: { record_id: record.id, override: layer.name, ...(request.note ? { note: request.note } : {}) },
    ipAddress: request.clientIp,
    userAgent: request.userAgent,
  });
  return { record_id: record.id, stack_id: stack.id, override: layer.name };
}
