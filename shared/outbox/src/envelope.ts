import { randomUUID } from 'node:crypto';
import { currentTraceparent, SUBJECTS } from '@brokkr/bus';
import type { DomainEvent, EventType, OutboxRow } from '@brokkr/contracts';

export type { OutboxRow };

/**
 * The envelope: a domain event as its `outbox` row. The row id is the event id (the publish's
 * Nats-Msg-Id), the subject is the event type's, the payload is Brokkr's webhook envelope as
 * subscribers receive it, and the headers carry the trace parent of the write that caused it.
 * sql/insert-envelopes.ts is the same rule for events a statement builds itself.
 */
export function outboxRow(event: DomainEvent, traceparent: string | undefined): OutboxRow {
  return {
    id: event.id,
    event_type: event.event_type,
    subject: SUBJECTS.event(event.event_type),
    payload: event,
    headers: outboxHeaders(traceparent),
  };
}

function outboxHeaders(traceparent: string | undefined): { traceparent: string } | null {
  return traceparent ? { traceparent } : null;
}

/**
 * An event whose outbox row the write's own statement inserts (a data-modifying CTE built with
 * outboxInsertSql), so a one-statement write needs no BEGIN/COMMIT and no second round trip.
 * Everything the envelope holds besides `data` is fixed here, before the statement runs; `data`
 * is built by the statement from the rows it writes and read back from the row it stored.
 */
export interface StatementEvent {
  id: string;
  event_type: EventType;
  timestamp: string;
  subject: string;
  headers: { traceparent: string } | null;
}

export function statementEvent(eventType: EventType, now: Date = new Date()): StatementEvent {
  return {
    id: randomUUID(),
    event_type: eventType,
    timestamp: now.toISOString(),
    subject: SUBJECTS.event(eventType),
    headers: outboxHeaders(currentTraceparent()),
  };
}

/**
 * The outbox row as it was stored, for the publish after commit. jsonb keeps no key order, so
 * `data` is put back in `keys`' order (the order Brokkr's payload has) and the envelope goes
 * out byte for byte as an event built in JavaScript would.
 */
export function statementOutboxRow(event: StatementEvent, storedData: Record<string, unknown>, keys: readonly string[]): OutboxRow {
  const data: Record<string, unknown> = {};
  for (const key of keys) data[key] = storedData[key];
  const { id, event_type, timestamp } = event;
  return outboxRow({ id, event_type, timestamp, data }, event.headers?.traceparent);
}
