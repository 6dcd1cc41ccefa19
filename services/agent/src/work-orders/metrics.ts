import { metricsFor, type Registry } from '@brokkr/telemetry';
import { KNOWN_WORK_TYPES } from '@brokkr/contracts';

/** Work types as metric labels: the known ones, everything else as `other` (bounded cardinality). */
export function workTypeLabel(workType: string): string {
  return (KNOWN_WORK_TYPES as readonly string[]).includes(workType) ? workType : 'other';
}

export function createWorkOrderMetrics(registry: Registry) {
  const m = metricsFor(registry);
  return {
    claimed: m.counter({
      name: 'brokkr_agent_work_orders_claimed_total',
      help: 'Work orders this agent claimed, by work type',
      labelNames: ['work_type'] as const,
    }),
    succeeded: m.counter({
      name: 'brokkr_agent_work_orders_succeeded_total',
      help: 'Work orders completed successfully, by work type',
      labelNames: ['work_type'] as const,
    }),
    failed: m.counter({
      name: 'brokkr_agent_work_orders_failed_total',
      help: 'Work orders completed as failed, by work type and whether the failure was reported retryable',
      labelNames: ['work_type', 'retryable'] as const,
    }),
    abandoned: m.counter({
      name: 'brokkr_agent_work_orders_abandoned_total',
      help: 'Claimed work orders left to the broker stale-claim release (cut off by shutdown, or the result could not be reported)',
      labelNames: ['work_type'] as const,
    }),
    duration: m.histogram({
      name: 'brokkr_agent_work_order_duration_seconds',
      help: 'From claim to result, by work type and result (success, failure)',
      labelNames: ['work_type', 'result'] as const,
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
    }),
  };
}

export type WorkOrderMetrics = ReturnType<typeof createWorkOrderMetrics>;
