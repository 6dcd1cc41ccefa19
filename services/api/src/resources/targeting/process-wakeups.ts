import { Gauge } from '@brokkr/telemetry';
import type { ApiContext } from '../../context.ts';
import { AgentWakeups } from './wakeups.ts';

const FLUSH_TIMEOUT_MS = 2000;
const byContext = new WeakMap<ApiContext, Promise<AgentWakeups>>();

async function start(ctx: ApiContext): Promise<AgentWakeups> {
  const wakeups = new AgentWakeups();
  wakeups.listen(ctx.bus.nc, ctx.logger);
  new Gauge({
    name: 'brokkr_target_state_long_polls_waiting',
    help: 'Target-state requests of this replica currently held waiting for a change',
    registers: [ctx.metrics.registry],
    collect() {
      this.set(wakeups.size);
    },
  });
  // Make sure the server knows the subscription before the first waiter reads its state, so a
  // notification published right after that read is not missed. Bounded: NATS may be down.
  await Promise.race([ctx.bus.nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    ctx.logger.warn({ err }, 'agent wake-up subscription not confirmed'),
  );
  return wakeups;
}

/**
 * The process's one wake-up dispatcher, created (and subscribed to `brokkr.notify.agent.*`) by
 * the first long-poll that needs it; the subscription ends when the NATS connection drains.
 */
export function processWakeups(ctx: ApiContext): Promise<AgentWakeups> {
  let wakeups = byContext.get(ctx);
  if (!wakeups) {
    wakeups = start(ctx);
    byContext.set(ctx, wakeups);
  }
  return wakeups;
}
