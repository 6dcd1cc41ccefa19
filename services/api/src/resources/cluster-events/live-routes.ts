import { uuid } from '@brokkr/contracts';
import { isAdminOrGenerator } from '../../auth/guards.ts';
import { LISTENER_MAX_MESSAGE_BYTES, type UpgradeRoute } from '../../http/upgrade-route.ts';
import { findLiveStack } from '../../domain/live-stack.ts';

const stackId = uuid();

/**
 * `/api/v1/stacks/{id}/live`: the stack's `k8s_event`, `pod_log_line`
 * and `log_gap` frames as agents stream them, from whichever replica they reach. Admin (read-only
 * UI PAK included) or the generator owning the stack; agents get 403. Unlike Brokkr, a missing or
 * deleted stack is a 404 for everyone (Brokkr: 101 and silence for an admin, 403 for a generator).
 * The router closes the socket when its PAK stops being valid, and live/live-state.ts when the stack is
 * deleted or moves to another generator (Brokkr keeps it open in both cases).
 */
const stackLiveRoute: UpgradeRoute = {
  path: '/api/v1/stacks/:id/live',
  subprotocolAuth: true,
  maxMessageBytes: () => LISTENER_MAX_MESSAGE_BYTES,
  async handle(up) {
    const id = stackId.safeParse(up.params.id);
    if (!id.success) return up.reject(400, `Invalid URL: Cannot parse \`${up.params.id}\` as a UUID`);
    const { identity, ctx } = up;
    if (identity.agent !== null) return up.reject(403);
    const stack = await findLiveStack(ctx.db.pool, id.data);
    if (!stack) return up.reject(404);
    if (!isAdminOrGenerator(identity, stack.generator_id)) return up.reject(403);
    const { stacks } = ctx.feeds;
    await stacks.listen(id.data);
    try {
      stacks.add(id.data, await up.accept(), identity);
    } catch (err) {
      stacks.abandon(id.data);
      ctx.logger.debug({ err }, 'live stack subscription not completed');
    }
  },
};

/** The consumer socket of cluster events (listed in live/upgrade-routes.ts). */
export const clusterEventLiveRoutes: UpgradeRoute[] = [stackLiveRoute];
