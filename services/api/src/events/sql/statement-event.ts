import { randomUUID } from 'node:crypto';
import { currentTraceparent, SUBJECTS } from '@brokkr/bus';
import type { EventType, OutboxRow } from '@brokkr/contracts';

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
  const traceparent = currentTraceparent();
  return {
    id: randomUUID(),
    event_type: eventType,
    timestamp: now.toISOString(),
    subject: SUBJECTS.event(eventType),
    headers: traceparent ? { traceparent } : null,
  };
}

/** ISO-8601 UTC with milliseconds, exactly as Date.toISOString() prints the column once pg has parsed it (both truncate). */
export const isoTimestampSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The INSERT of one outbox row, for a CTE of the write's statement. `event` is the SQL of the
 * StatementEvent parameter (e.g. `$6::jsonb`), `data` an SQL jsonb expression over `from`. The
 * CTE returns the stored `data` as `event_data`: the publish after commit sends exactly that.
 */
export function outboxInsertSql(options: { event: string; data: string; from: string }): string {
  const e = options.event;
  return `INSERT INTO outbox (id, event_type, subject, payload, headers)
     SELECT (${e}->>'id')::uuid, ${e}->>'event_type', ${e}->>'subject',
            jsonb_build_object('id', ${e}->'id', 'event_type', ${e}->'event_type', 'timestamp', ${e}->'timestamp', 'data', ${options.data}),
            NULLIF(${e}->'headers', 'null'::jsonb)
       FROM ${options.from}
     RETURNING payload->'data' AS event_data`;
}

/**
 * The outbox row as it was stored, for the publish after commit. jsonb keeps no key order, so
 * `data` is put back in `keys`' order (the order Brokkr's payload has) and the envelope goes
 * out byte for byte as an event built in JavaScript would.
 */
export function statementOutboxRow(event: StatementEvent, storedData: Record<string, unknown>, keys: readonly string[]): OutboxRow {
  const data: Record<string, unknown> = {};
  for (const key of keys) data[key] = storedData[key];
  return {
    id: event.id,
    event_type: event.event_type,
    subject: event.subject,
    payload: { id: event.id, event_type: event.event_type, timestamp: event.timestamp, data },
    headers: event.headers,
  };
}
