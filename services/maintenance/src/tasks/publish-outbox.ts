import { publishOutboxRows, type OutboxPublishResult, type PublishableOutboxRow } from '@brokkr/bus';
import { recordPublishAttempt } from '@brokkr/outbox';
import type { TaskContext } from './task.ts';

/**
 * Publishes committed outbox rows and records the attempt on every row tried: acknowledged rows are
 * stamped published, the others stay for the relay's next tick. The relay and the tasks that
 * publish their own events right after their commit all go through here.
 */
export async function publishAndRecord(ctx: TaskContext, rows: readonly PublishableOutboxRow[]): Promise<OutboxPublishResult> {
  if (rows.length === 0) return { published: [] };
  const result = await publishOutboxRows(ctx.js, rows);
  await recordPublishAttempt(
    ctx.db,
    rows.map((r) => r.id),
    result.published,
  );
  return result;
}
