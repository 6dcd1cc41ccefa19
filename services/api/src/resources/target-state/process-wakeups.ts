import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@brokkr/logger';
import { Gauge, type Registry } from '@brokkr/telemetry';
import { AgentWakeups } from '../../events/wakeups.ts';

const FLUSH_TIMEOUT_MS = 2000;

/**
 * The process's one wake-up dispatcher, created at start: subscribed to `brokkr.notify.agent.*`
 * (the subscription ends when the NATS connection drains) and counted by the long-poll gauge.
 */
export async function startProcessWakeups(nc: NatsConnection, registry: Registry, logger: Logger): Promise<AgentWakeups> {
  const wakeups = new AgentWakeups();
  wakeups.listen(nc, logger);
  new Gauge({
    name: 'brokkr_target_state_long_polls_waiting',
    help: 'Long-poll requests of this replica (target state, pending work orders) currently held waiting',
    registers: [registry],
    collect() {
      this.set(wakeups.size);
    },
  });
  // Make sure the server knows the subscription before the first waiter reads its state, so a
  // notification published right after that read is not missed. Bounded: NATS may be down.
  await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    logger.warn({ err }, 'agent wake-up subscription not confirmed'),
  );
  return wakeups;
}
