import { sendAgentNotices } from '@brokkr/bus';
import type { OutboxRow } from '@brokkr/outbox';
import { repeatWhileFull } from '../runner/batches.ts';
import { announceExpiringStacks, expireDueStacks, type ExpiryChange } from '../sql/expire-stacks.ts';
import { publishAuditFeed } from './audit-feed.ts';
import { publishAndRecord } from './publish-outbox.ts';
import type { MaintenanceTask, TaskContext } from './task.ts';

// A stack's events in the order they happened (one statement writes all three).
const ORDER: Record<string, number> = { 'stack.expiring': 1, 'stack.expired': 2, 'stack.deleted': 3 };

/**
 * Publishes what a statement committed at once rather than after the relay delay; whatever is
 * not acknowledged stays unpublished for the outbox relay (the row id is the Nats-Msg-Id, so a
 * double publish is dropped by the stream).
 */
async function publishNow(ctx: TaskContext, change: ExpiryChange): Promise<void> {
  const events: OutboxRow[] = [...change.events].sort((a, b) => (ORDER[a.event_type] ?? 0) - (ORDER[b.event_type] ?? 0));
  const { firstError } = await publishAndRecord(ctx, events);
  if (firstError !== undefined) ctx.logger.warn({ err: firstError }, 'stack expiry events left to the outbox relay');
  await publishAuditFeed(ctx.js, change.audit, ctx.logger);
  // As DELETE /stacks/{id} does: the agents prune the stack now, not at their next poll.
  sendAgentNotices(ctx.nc, change.agentIds, ctx.logger);
}

/**
 * Expiring stacks (preview environments): announce (`stack.expiring`) those expiring within the
 * warning window, then delete those past expires_at (`stack.expired`, `stack.deleted`). The
 * agents associated with a deleted stack are woken, and drop its resources when their
 * target state returns the deletion marker.
 */
export const stackExpiryTask: MaintenanceTask = {
  name: 'stack-expiry',
  intervalSeconds: (s) => s.stackExpiryIntervalSeconds,
  async run(ctx) {
    const { batchSize, stackExpiryWarningSeconds } = ctx.settings;
    const step = (write: (limit: number) => Promise<ExpiryChange>) =>
      repeatWhileFull(batchSize, async (limit) => {
        const change = await write(limit);
        await publishNow(ctx, change);
        return change.count;
      });
    const announced = await step((limit) => announceExpiringStacks(ctx.db, stackExpiryWarningSeconds, limit));
    const expired = await step((limit) => expireDueStacks(ctx.db, limit));
    return announced + expired;
  },
};
