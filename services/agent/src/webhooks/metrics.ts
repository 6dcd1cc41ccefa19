import { metricsFor, type Registry } from '@brokkr/telemetry';

/** Outcome of one claimed delivery, as counted in `brokkr_agent_webhook_deliveries_total`. */
export type DeliveryOutcome =
  /** the receiver answered 2xx */
  | 'success'
  /** the receiver answered something else (3xx included: redirects are not followed) */
  | 'failure'
  /** no answer: timeout, connection failure, bad URL */
  | 'error'
  /** not sent or cut off (shutdown, lease ran out before its turn): left to the broker's lease */
  | 'skipped';

export function createWebhookMetrics(registry: Registry) {
  const m = metricsFor(registry);
  return {
    deliveries: m.counter({
      name: 'brokkr_agent_webhook_deliveries_total',
      help: 'Agent-delivered webhooks by outcome (success, failure = non-2xx, error = no answer, skipped = left to the lease)',
      labelNames: ['outcome'] as const,
    }),
    reports: m.counter({
      name: 'brokkr_agent_webhook_reports_total',
      help: 'Delivery results posted to the broker, by outcome',
      labelNames: ['status'] as const,
    }),
    polls: m.counter({
      name: 'brokkr_agent_webhook_polls_total',
      help: 'Pending-webhook claims, by outcome (empty, claimed, error)',
      labelNames: ['status'] as const,
    }),
  };
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;
