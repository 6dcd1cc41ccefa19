import { createMetricsRegistry, metricsFor, type Registry } from '@brokkr/telemetry';

/** Brokkr's metric names plus the api's own operational counters. */
export function createApiMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry: Registry = createMetricsRegistry({ service: 'api', defaultMetrics: options.defaultMetrics ?? true });
  const m = metricsFor(registry);
  return {
    /** Served on the public port's /metrics. */
    registry,
    /**
     * Series labelled with agent names and ids (and stack names: open drift per stack): only on the metrics
     * port (BROKKR__BROKER__METRICS_PORT), never on the public port, where anyone could enumerate the fleet (docs/security.md).
     */
    agentRegistry: createMetricsRegistry({ service: 'api', defaultMetrics: false }),
    httpRequests: m.counter({
      name: 'brokkr_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['endpoint', 'method', 'status'] as const,
    }),
    httpDuration: m.histogram({
      name: 'brokkr_http_request_duration_seconds',
      help: 'HTTP request duration by route template and method',
      labelNames: ['endpoint', 'method'] as const,
    }),
    activeAgents: m.gauge({ name: 'brokkr_active_agents', help: 'Agents with status ACTIVE (not deleted)' }),
    stacksTotal: m.gauge({ name: 'brokkr_stacks_total', help: 'Stacks not deleted' }),
    deploymentObjectsTotal: m.gauge({ name: 'brokkr_deployment_objects_total', help: 'Deployment objects not deleted' }),
    defaultAdminPakInUse: m.gauge({
      name: 'brokkr_default_admin_pak_hash_in_use',
      help: "1 while the admin PAK is Brokkr's public default",
    }),
    memoryReleases: m.counter({
      name: 'brokkr_memory_releases_total',
      help: 'Times this api process, quiet after a load peak, gave the memory V8 had pooled back to the OS (ADR 0030)',
    }),
    consoleStreams: m.gauge({
      name: 'brokkr_console_streams',
      help: 'Console event streams (/ui/events) open on this replica; while 0 it does not subscribe to events',
    }),
    authFailedAuditSuppressed: m.counter({
      name: 'brokkr_auth_failed_audit_suppressed_total',
      help: 'auth.failed audit entries not written because of the per-replica rate limit',
    }),
    auditFallbackWrites: m.counter({
      name: 'brokkr_audit_fallback_writes_total',
      help: 'Audit entries written straight to Postgres because NATS did not acknowledge them',
      labelNames: ['reason'] as const,
    }),
    renders: m.counter({
      name: 'brokkr_renders_total',
      help: 'Distinct render inputs (chart or overlay, values, capability class, patches) rendered by this api, by outcome',
      labelNames: ['outcome'] as const,
    }),
    renderReuses: m.counter({
      name: 'brokkr_render_cache_hits_total',
      help: 'Distinct render inputs a write needed that were already stored (rendered before, for any agent or object)',
    }),
    webhookDecryptFailures: m.counter({
      name: 'brokkr_webhook_decrypt_failures_total',
      help: 'Webhook URLs or auth headers that could not be decrypted',
      labelNames: ['field', 'path'] as const,
    }),
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;
