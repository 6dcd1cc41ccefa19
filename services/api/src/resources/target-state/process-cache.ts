import type { NatsConnection } from '@nats-io/transport-node';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { Counter, type Registry } from '@brokkr/telemetry';
import { TargetStateCache } from './answer-cache.ts';
import type { AgentWakeups } from '../../events/wakeups.ts';

/**
 * The process's target-state cache, fed by the process's one wake-up subscription. It answers from
 * memory only while that subscription can be trusted to have seen every wake-up: a disconnect from
 * NATS or a slow-consumer drop loses hints, so the cache is emptied and bypassed until the
 * connection is back.
 */
export function startTargetStateCache(deps: {
  db: Queryable;
  nc: NatsConnection;
  wakeups: AgentWakeups;
  registry: Registry;
  logger: Logger;
}): TargetStateCache {
  const answers = new Counter({
    name: 'brokkr_target_state_reads_total',
    help: 'Target states this replica worked out, by source: memory (unchanged), patched (a stack part read once for all its agents), database (the full query)',
    labelNames: ['source'],
    registers: [deps.registry],
  });
  const stackReads = new Counter({
    name: 'brokkr_target_state_stack_reads_total',
    help: "Reads of one stack's newest object, each shared by every agent answer (or agent-channel patch) that needed it",
    registers: [deps.registry],
  });
  const cache = new TargetStateCache(deps.db, {
    stackRead: () => stackReads.inc(),
    hit: () => answers.inc({ source: 'memory' }),
    patched: () => answers.inc({ source: 'patched' }),
    miss: () => answers.inc({ source: 'database' }),
  });
  deps.wakeups.onNotice((agentId, notice) => cache.noticed(agentId, notice()));
  void followConnection(deps.nc, cache, deps.logger);
  return cache;
}

async function followConnection(nc: NatsConnection, cache: TargetStateCache, logger: Logger): Promise<void> {
  try {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') cache.distrust();
      else if (status.type === 'reconnect' || status.type === 'slowConsumer') cache.trust();
    }
    cache.distrust();
  } catch (err) {
    logger.warn({ err }, 'target-state cache: NATS status feed ended');
    cache.distrust();
  }
}
