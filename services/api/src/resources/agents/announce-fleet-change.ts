import type { ApiContext } from '../../context.ts';

/**
 * The agent's fleet record may have changed (it heartbeated, over REST or the live channel):
 * `/fleet/live` subscribers on every replica get its new record. Best effort, never throws.
 */
export function announceFleetChange(ctx: ApiContext, agentId: string): void {
  try {
    ctx.feeds.fleet.announce(agentId, 'heartbeat');
  } catch (err) {
    ctx.logger.debug({ err, agentId }, 'fleet change not announced');
  }
}
