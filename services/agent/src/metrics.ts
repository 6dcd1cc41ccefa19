import { createMetricsRegistry, metricsFor, type Registry } from '@brokkr/telemetry';

const SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** `brokkr_agent_*` series, registered up front so /metrics always shows every one of them. */
export function createAgentMetrics(registry: Registry = createMetricsRegistry({ service: 'agent' })) {
  const m = metricsFor(registry);
  return {
    registry,
    pollRequests: m.counter({
      name: 'brokkr_agent_poll_requests_total',
      help: 'Target-state requests by outcome (success = new state, not_modified = 304, error; patched = a new state from the agent channel, no request)',
      labelNames: ['status'] as const,
    }),
    pollDuration: m.histogram({
      name: 'brokkr_agent_poll_duration_seconds',
      help: 'Target-state request duration, including the time a long-poll was held',
      buckets: SECONDS,
    }),
    lastSuccessfulPoll: m.gauge({
      name: 'brokkr_agent_last_successful_poll_timestamp',
      help: 'Unix time of the last answered target-state request',
    }),
    applies: m.counter({ name: 'brokkr_agent_applies_total', help: 'Objects server-side applied, by kind', labelNames: ['kind'] as const }),
    applyFailures: m.counter({
      name: 'brokkr_agent_apply_failures_total',
      help: 'Objects whose dry run or apply failed, by kind',
      labelNames: ['kind'] as const,
    }),
    ...driftMetrics(m),
    pruneDeletions: m.counter({
      name: 'brokkr_agent_prune_deletions_total',
      help: 'Objects deleted because their stack moved on or went away, by kind',
      labelNames: ['kind'] as const,
    }),
    reconcileDuration: m.histogram({
      name: 'brokkr_agent_reconcile_duration_seconds',
      help: 'Duration of reconcile passes that had work, by result',
      labelNames: ['result'] as const,
      buckets: SECONDS,
    }),
    heartbeats: m.counter({
      name: 'brokkr_agent_heartbeat_sent_total',
      help: 'Heartbeats sent, by outcome',
      labelNames: ['status'] as const,
    }),
    lastHeartbeat: m.gauge({ name: 'brokkr_agent_last_heartbeat_timestamp', help: 'Unix time of the last accepted heartbeat' }),
    k8sLatency: m.gauge({ name: 'brokkr_agent_kubernetes_api_latency_seconds', help: 'Latency of the last GET /version probe' }),
    eventsSent: m.counter({
      name: 'brokkr_agent_events_sent_total',
      help: 'Agent events posted to the broker, by outcome',
      labelNames: ['status'] as const,
    }),
    healthReports: m.counter({
      name: 'brokkr_agent_health_reports_total',
      help: 'Deployment-health reports, by outcome',
      labelNames: ['status'] as const,
    }),
  };
}

/** The drift checks' series (drift/). */
function driftMetrics(m: ReturnType<typeof metricsFor>) {
  return {
    driftCorrections: m.counter({
      name: 'brokkr_agent_drift_corrections_total',
      help: 'Drift put back: a correction by the drift checks (correct mode), or a resync apply that changed the live object (drift detection off)',
      labelNames: ['kind'] as const,
    }),
    driftChecks: m.counter({
      name: 'brokkr_agent_drift_checks_total',
      help: 'Drift checks of applied objects by result (clean, drifted, missing, unchanged = live object as last checked, error)',
      labelNames: ['result'] as const,
    }),
    driftDetected: m.counter({
      name: 'brokkr_agent_drift_detected_total',
      help: 'Drift episodes found (a changed or deleted object the stack policy does not ignore), by kind',
      labelNames: ['kind'] as const,
    }),
    driftOpen: m.gauge({
      name: 'brokkr_agent_drift_open',
      help: 'Objects drifted now and not corrected (report mode, or a correction that failed)',
    }),
    driftSweeps: m.counter({ name: 'brokkr_agent_drift_sweeps_total', help: 'Full drift sweeps of every applied object completed' }),
    driftWatched: m.gauge({ name: 'brokkr_agent_drift_watched_objects', help: 'Applied objects the drift checks follow' }),
    driftWatches: m.gauge({ name: 'brokkr_agent_drift_watches', help: 'Watches open, one per resource type the agent applied' }),
    driftReports: m.counter({
      name: 'brokkr_agent_drift_reports_total',
      help: 'Drift report batches sent to the hub, by outcome (sent, error, refused, unsupported = the hub has no drift records)',
      labelNames: ['status'] as const,
    }),
  };
}

export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
