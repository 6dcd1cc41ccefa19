import type { NatsConnection } from '@nats-io/transport-node';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { Counter, type Registry } from '@brokkr/telemetry';
import { TargetStateCache } from './answer-cache.ts';

/**
 * The process's target-state answers, the delivery's first stage (pipeline.ts). They answer from
 * memory only while the process's notice subscription can be trusted to have seen every notice: a
 * disconnect from NATS or a slow-consumer drop loses notices, so the cache is emptied and bypassed
 * until the connection is back.
 */
export function startTargetStateCache(deps: { db: Queryable; nc: NatsConnection; registry: Registry; logger: Logger }): TargetStateCache {
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
