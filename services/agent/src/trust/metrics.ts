import { metricsFor, type Registry } from '@brokkr/telemetry';

export function createTrustMetrics(registry: Registry) {
  const m = metricsFor(registry);
  return {
    refusals: m.counter({
      name: 'brokkr_agent_trust_refusals_total',
      help: 'Deployment objects and work orders refused by the trust policy, by reason',
      labelNames: ['reason'] as const,
    }),
    verifySeconds: m.histogram({
      name: 'brokkr_agent_trust_verify_seconds',
      help: 'Time to check one deployment object against the trust policy (signature, digest, scope, targeting, version)',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.25],
    }),
    stale: m.gauge({
      name: 'brokkr_agent_trust_metadata_stale',
      help: '1 while the trust metadata is stale (no fresh signed timestamp): no new version is taken',
    }),
    renderDifferences: m.counter({
      name: 'brokkr_agent_trust_render_differences_total',
      help: 'Signed charts, overlays and templates whose render the hub served differs from the agent’s own render of the signed inputs (refused as signature_invalid)',
    }),
    rootVersion: m.gauge({ name: 'brokkr_agent_trust_root_version', help: 'The version of the trust root the agent checks against' }),
  };
}
export type TrustMetrics = ReturnType<typeof createTrustMetrics>;
