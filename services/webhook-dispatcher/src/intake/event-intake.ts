import { SpanKind, SpanStatusCode, trace, type Link } from '@opentelemetry/api';
import { DURABLES, ensureDurable, extractTraceContext, STREAMS, SUBJECTS, type Bus, type JsMsg } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import type { Queryable } from '@brokkr/db';
import { insertDeliveries, type NewDelivery } from '@brokkr/webhook-deliveries';
import type { DispatcherMetrics } from '../metrics.ts';
import type { SubscriptionCache } from '../subscriptions/cache.ts';
import { parseEventEnvelope, serializeEventEnvelope } from '@brokkr/contracts';

export const DURABLE_NAME = DURABLES.webhookDispatcher;

/** Most events turned into deliveries by one INSERT. */
const MAX_BATCH = 200;

export interface EventIntakeOptions {
  bus: Bus;
  db: Queryable;
  cache: SubscriptionCache;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** New hub deliveries exist: wake the delivery loops. */
  onNewDeliveries(count: number): void;
}

export interface EventIntake {
  /** Stops pulling, hands back messages not yet handled (nak), waits for the batch in progress. */
  stop(): Promise<void>;
}

const tracer = trace.getTracer('brokkr-webhook-dispatcher');

function retryDelayMs(batch: readonly JsMsg[]): number {
  const deliveries = Math.max(...batch.map((m) => m.info.deliveryCount));
  return Math.min(30_000, 500 * 2 ** Math.min(deliveries, 6));
}

/** What handling a batch needs: the intake's options and its logger. */
interface Intake {
  options: EventIntakeOptions;
  logger: Logger;
}

/**
 * Step 1 of a webhook. One durable consumer on `brokkr.events.>`, shared by every replica (the
 * server hands each message to one of them), turns events into delivery rows and acks only after
 * they are committed. A crash before the ack means the messages come back, and the unique
 * (event_id, subscription_id) rule turns the replay into a no-op. Messages that arrive together
 * are handled together: one INSERT for the batch, so intake keeps up with bursts.
 */
export async function startEventIntake(options: EventIntakeOptions): Promise<EventIntake> {
  const intake: Intake = { options, logger: options.logger.child({ component: 'intake' }) };
  const messages = await consumeEvents(options.bus);
  let stopping = false;

  // Messages wait in `queue` while a batch is being written; one worker drains it, so whatever
  // arrived meanwhile becomes the next batch. `draining` is cleared synchronously when the queue
  // is found empty, so a message pushed right after is never left without a worker.
  const queue: JsMsg[] = [];
  let draining: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    try {
      await new Promise((resolve) => setImmediate(resolve)); // let messages already received join
      while (queue.length > 0) await handleTraced(intake, queue.splice(0, MAX_BATCH));
    } finally {
      draining = undefined;
    }
  };

  const done = (async () => {
    for await (const m of messages) {
      if (stopping) {
        // Pulled but not started: hand it straight back so another replica takes it now.
        m.nak();
        continue;
      }
      queue.push(m);
      draining ??= drain();
      // Back-pressure: do not pull far ahead of what Postgres takes.
      if (queue.length >= MAX_BATCH * 2) await draining;
    }
  })().catch((err: unknown) => intake.logger.error({ err }, 'event intake stopped'));

  return {
    async stop() {
      stopping = true;
      messages.stop();
      await done;
      await draining;
    },
  };
}

/** The shared durable consumer (created if missing), consuming. */
async function consumeEvents(bus: Bus) {
  await ensureDurable(bus.jsm, {
    stream: STREAMS.events,
    durable: DURABLE_NAME,
    filterSubject: SUBJECTS.eventsAll,
    ackWaitMs: 30_000,
    // Never give up on an event: it is retried (with backoff) until Postgres takes its deliveries.
    maxDeliver: -1,
    maxAckPending: 2000,
  });
  const consumer = await bus.js.consumers.get(STREAMS.events, DURABLE_NAME);
  return consumer.consume({ max_messages: 256 });
}

/** One batch in a span linked to each event's trace; a batch that fails comes back later (nak with backoff). */
function handleTraced(intake: Intake, batch: JsMsg[]): Promise<void> {
  const links: Link[] = batch.flatMap((m) => {
    const context = trace.getSpanContext(extractTraceContext(m.headers));
    return context ? [{ context }] : [];
  });
  return tracer.startActiveSpan(
    'brokkr.events process',
    { kind: SpanKind.CONSUMER, links, attributes: { 'messaging.batch.message_count': batch.length } },
    async (span) => {
      try {
        await handleBatch(intake, batch);
      } catch (err) {
        // Postgres unavailable, most likely: back off instead of burning redeliveries.
        span.setStatus({ code: SpanStatusCode.ERROR });
        const delayMs = retryDelayMs(batch);
        intake.logger.warn({ err, events: batch.length, delayMs }, 'events not turned into deliveries; retrying');
        for (const m of batch) m.nak(delayMs);
      } finally {
        span.end();
      }
    },
  );
}

/** The batch's deliveries in one INSERT, then every well-formed message acked; a malformed one is dropped (term). */
async function handleBatch({ options, logger }: Intake, batch: JsMsg[]): Promise<void> {
  const { metrics } = options;
  const rows: NewDelivery[] = [];
  const accepted: JsMsg[] = [];
  for (const m of batch) {
    const event = parseEventEnvelope(m.string());
    if (!event) {
      logger.error({ subject: m.subject, seq: m.seq }, 'malformed event envelope; dropped');
      metrics.eventsConsumed.inc({ result: 'malformed' });
      m.term();
      continue;
    }
    accepted.push(m);
    const subs = await options.cache.match(event.event_type, event.data);
    metrics.eventsConsumed.inc({ result: subs.length > 0 ? 'matched' : 'unmatched' });
    const payload = serializeEventEnvelope(event);
    for (const s of subs) rows.push({ subscriptionId: s.id, eventId: event.id, eventType: event.event_type, payload });
  }
  const { inserted, forHub } = await insertDeliveries(options.db, rows);
  for (const m of accepted) m.ack();
  metrics.deliveriesCreated.inc(inserted);
  if (forHub > 0) options.onNewDeliveries(forHub);
}
