import { sendAgentNotices } from '@brokkr/bus';
import { buildEvent } from '@brokkr/contracts';
import { insertOutboxRows, outboxRow, type OutboxRow } from '@brokkr/outbox';
import { stepRollout } from '../rollouts/step.ts';
import { lockActiveRollouts } from '../sql/rollouts/queries.ts';
import { updateRollout } from '../sql/rollouts/update-rollout.ts';
import { publishAndRecord } from './publish-outbox.ts';
import type { MaintenanceTask, TaskContext } from './task.ts';

/** After commit: the events at once (the relay retries what is not acknowledged), then the wake-ups. */
async function announce(ctx: TaskContext, rows: readonly OutboxRow[], wake: ReadonlySet<string>): Promise<void> {
  const { firstError } = await publishAndRecord(ctx, rows);
  if (firstError !== undefined) ctx.logger.warn({ err: firstError }, 'rollout events left to the outbox relay');
  sendAgentNotices(ctx.nc, wake, ctx.logger);
}

/**
 * Progressive rollouts (ADR 0016): starts pending rollouts (waves assigned, first wave
 * released), and moves progressing ones through their gates: next wave, success, or failure
 * with automatic rollback. One transaction per tick holds the rollout rows (SKIP LOCKED against
 * the api's pause/abort), the state changes and their outbox rows, so a replica killed mid-tick
 * leaves nothing half-done and the next tick, on any replica, starts over from the same rows.
 * The agents whose served object changed are woken after commit.
 */
export const rolloutsTask: MaintenanceTask = {
  name: 'rollouts',
  intervalSeconds: (s) => s.rolloutIntervalSeconds,
  async run(ctx) {
    const rows: OutboxRow[] = [];
    const wake = new Set<string>();
    let changed = 0;
    await ctx.db.query('BEGIN');
    try {
      const now = new Date();
      for (const rollout of await lockActiveRollouts(ctx.db, ctx.settings.batchSize)) {
        const step = await stepRollout(ctx.db, rollout, now);
        if (step.change) {
          await updateRollout(ctx.db, rollout.id, step.change);
          changed++;
        }
        for (const e of step.events) rows.push(outboxRow(buildEvent(e.type, e.data), undefined));
        for (const id of step.wake) wake.add(id);
      }
      await insertOutboxRows(ctx.db, rows);
      await ctx.db.query('COMMIT');
    } catch (err) {
      await ctx.db.query('ROLLBACK');
      throw err;
    }
    await announce(ctx, rows, wake);
    return changed;
  },
};
