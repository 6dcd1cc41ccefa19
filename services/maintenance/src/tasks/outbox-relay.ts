import { MAX_BATCHES_PER_TICK } from '../runner/batches.ts';
import { selectUnpublishedOutbox } from '../sql/select-unpublished-outbox.ts';
import { publishAndRecord } from './publish-outbox.ts';
import type { MaintenanceTask, TaskContext } from './task.ts';

const MAX_RELAY_BATCH = 500;

/** One batch; returns how many were published and whether the tick should go on. */
async function relayBatch(ctx: TaskContext, limit: number): Promise<{ published: number; more: boolean }> {
  const rows = await selectUnpublishedOutbox(ctx.db, ctx.settings.outboxRelayAfterSeconds, limit);
  if (rows.length === 0) return { published: 0, more: false };
  const { published, firstError } = await publishAndRecord(ctx, rows);
  if (firstError !== undefined) {
    // NATS is down or refusing: the rows stay unpublished and the next tick tries again.
    ctx.logger.warn({ err: firstError, unpublished: rows.length - published.length }, 'outbox relay could not publish every event');
    return { published: published.length, more: false };
  }
  return { published: published.length, more: rows.length === limit };
}

/**
 * Republishes outbox rows the api committed but did not publish (crash between commit and
 * publish, NATS down). Nats-Msg-Id = the row id: if the api's publish did land after all, or two
 * relays overlap, the stream's duplicate window (2 min, far above the relay delay) drops the
 * repeat, so every event is stored once.
 */
export const outboxRelayTask: MaintenanceTask = {
  name: 'outbox-relay',
  intervalSeconds: (s) => s.outboxRelayIntervalSeconds,
  async run(ctx) {
    const limit = Math.min(ctx.settings.batchSize, MAX_RELAY_BATCH);
    let total = 0;
    for (let i = 0; i < MAX_BATCHES_PER_TICK; i++) {
      const { published, more } = await relayBatch(ctx, limit);
      total += published;
      if (!more) break;
    }
    return total;
  },
};
