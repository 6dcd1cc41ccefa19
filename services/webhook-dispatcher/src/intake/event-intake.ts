import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { consumeDurable, extractTraceContext, STREAMS, SUBJECTS, type Bus, type DurableConsumerHandle, type JsMsg } from '@brokkr/bus';
import type { PgPool } from '../sql/pg-pool.ts';
import type { Logger } from '@brokkr/logger';
import type { DispatcherMetrics } from '../metrics.ts';
import { insertDeliveries } from '../sql/insert-deliveries.ts';
import type { SubscriptionCache } from '../subscriptions/cache.ts';
import { parseEnvelope, serializeEnvelope } from './event-envelope.ts';

export const DURABLE_NAME = 'webhook-dispatcher';

export interface EventIntakeOptions {
  bus: Bus;
  db: PgPool;
  cache: SubscriptionCache;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** New hub deliveries exist: wake the delivery loops. */
  onNewDeliveries(count: number): void;
}

const tracer = trace.getTracer('brokkr-webhook-dispatcher');

/**
 * Step 1 of a webhook: one durable consumer shared by every replica turns each event into its
 * delivery rows and acks only after they are committed. A crash before the ack means the message
 * comes back, and the unique (event_id, subscription_id) rule turns the replay into a no-op.
 */
export function startEventIntake(options: EventIntakeOptions): Promise<DurableConsumerHandle> {
  const logger = options.logger.child({ component: 'intake' });

  async function handle(m: JsMsg): Promise<void> {
    const event = parseEnvelope(m.string());
    if (!event) {
      logger.error({ subject: m.subject, seq: m.seq }, 'malformed event envelope; dropped');
      options.metrics.eventsConsumed.inc({ result: 'malformed' });
      m.term();
      return;
    }
    const subs = await options.cache.match(event.event_type, event.data);
    if (subs.length > 0) {
      const { inserted, forHub } = await insertDeliveries(options.db, {
        eventId: event.id,
        eventType: event.event_type,
        payload: serializeEnvelope(event),
        subscriptionIds: subs.map((s) => s.id),
      });
      options.metrics.deliveriesCreated.inc(inserted);
      if (forHub > 0) options.onNewDeliveries(forHub);
    }
    m.ack();
    options.metrics.eventsConsumed.inc({ result: subs.length > 0 ? 'matched' : 'unmatched' });
  }

  return consumeDurable({
    js: options.bus.js,
    jsm: options.bus.jsm,
    stream: STREAMS.events,
    durable: DURABLE_NAME,
    filterSubject: SUBJECTS.eventsAll,
    logger,
    maxMessages: 64,
    // Never give up on an event: it is retried (with backoff) until Postgres takes its deliveries.
    maxDeliver: -1,
    handler: (m) =>
      tracer.startActiveSpan(
        `${m.subject} process`,
        { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': m.subject } },
        extractTraceContext(m.headers),
        async (span) => {
          try {
            await handle(m);
          } catch (err) {
            // Postgres unavailable, most likely: back off instead of burning redeliveries.
            span.setStatus({ code: SpanStatusCode.ERROR });
            const delayMs = Math.min(30_000, 500 * 2 ** Math.min(m.info.deliveryCount, 6));
            logger.warn({ err, subject: m.subject, deliveries: m.info.deliveryCount, delayMs }, 'event not turned into deliveries; retrying');
            m.nak(delayMs);
          } finally {
            span.end();
          }
        },
      ),
  });
}
