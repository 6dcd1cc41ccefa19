import { metricsFor, type Counter, type Gauge, type Histogram, type Registry } from '@brokkr/telemetry';

export interface DispatcherMetrics {
  eventsConsumed: Counter<'result'>;
  deliveriesCreated: Counter<string>;
  /** One per attempt: success, retry (failed, will be retried), dead, released (not attempted). */
  attempts: Counter<'outcome'>;
  attemptDuration: Histogram<'outcome'>;
  inFlight: Gauge<string>;
  decryptFailures: Counter<'field' | 'path'>;
  auditFallbacks: Counter<string>;
}

export function createDispatcherMetrics(registry: Registry): DispatcherMetrics {
  const m = metricsFor(registry);
  return {
    eventsConsumed: m.counter({
      name: 'brokkr_webhook_events_consumed_total',
      help: 'Events read from BROKKR_EVENTS',
      labelNames: ['result'],
    }),
    deliveriesCreated: m.counter({ name: 'brokkr_webhook_deliveries_created_total', help: 'Delivery rows created from events' }),
    attempts: m.counter({
      name: 'brokkr_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'],
    }),
    attemptDuration: m.histogram({
      name: 'brokkr_webhook_delivery_duration_seconds',
      help: 'Time from sending a webhook POST to its outcome',
      labelNames: ['outcome'],
    }),
    inFlight: m.gauge({ name: 'brokkr_webhook_deliveries_in_flight', help: 'Webhook POSTs in flight in this replica' }),
    decryptFailures: m.counter({
      name: 'brokkr_webhook_decrypt_failures_total',
      help: 'Subscription secrets that could not be decrypted',
      labelNames: ['field', 'path'],
    }),
    auditFallbacks: m.counter({
      name: 'brokkr_webhook_audit_fallback_writes_total',
      help: 'Audit entries written to Postgres because NATS refused them',
    }),
  };
}
