import { SUBJECTS } from '@brokkr/bus';
import type { EventType } from '@brokkr/contracts';

/** ISO-8601 UTC with milliseconds, exactly as Date.toISOString() prints the value once pg has parsed it (both truncate). */
export const isoTimestampSql = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** SQL expressions, over the insert's FROM, for the parts of one event's envelope. */
export interface EnvelopeSql {
  /** uuid */
  id: string;
  /** text */
  eventType: string;
  /** text: SUBJECTS.event of the type, fixed in JavaScript (statementEvent, eventTypeColumnsSql) */
  subject: string;
  /** text: isoTimestampSql of the event's time */
  timestamp: string;
  /** jsonb: the event's `data` */
  data: string;
  /** jsonb `{traceparent}`, or NULL */
  headers: string;
}

/**
 * The INSERT of outbox rows whose events a statement builds itself, for a CTE of that statement:
 * the envelope of envelope.ts's outboxRow, in SQL.
 */
export function insertEnvelopesSql(e: EnvelopeSql, rows: { from: string; orderBy?: string; returning: string }): string {
  return `INSERT INTO outbox (id, event_type, subject, payload, headers)
     SELECT ${e.id}, ${e.eventType}, ${e.subject},
            jsonb_build_object('id', ${e.id}, 'event_type', ${e.eventType}, 'timestamp', ${e.timestamp}, 'data', ${e.data}),
            ${e.headers}
       FROM ${rows.from}${rows.orderBy ? `\n      ORDER BY ${rows.orderBy}` : ''}
     RETURNING ${rows.returning}`;
}

/**
 * The INSERT of one outbox row, for a CTE of a one-statement write. `event` is the SQL of the
 * StatementEvent parameter (e.g. `$6::jsonb`), `data` an SQL jsonb expression over `from`. The
 * CTE returns the stored `data` as `event_data`: the publish after commit sends exactly that.
 */
export function outboxInsertSql(options: { event: string; data: string; from: string }): string {
  const e = options.event;
  return insertEnvelopesSql(
    {
      id: `(${e}->>'id')::uuid`,
      eventType: `(${e}->>'event_type')`,
      subject: `(${e}->>'subject')`,
      timestamp: `(${e}->>'timestamp')`,
      data: options.data,
      headers: `NULLIF(${e}->'headers', 'null'::jsonb)`,
    },
    { from: options.from, returning: `payload->'data' AS event_data` },
  );
}

/**
 * `event_type` and `subject` columns for events of a type the statement fixes (a SELECT that builds
 * events for insertEnvelopesSql): the subject is SUBJECTS.event's, as in every other outbox row.
 */
export function eventTypeColumnsSql(eventType: EventType): string {
  return `${literal(eventType)}::text AS event_type, ${literal(SUBJECTS.event(eventType))}::text AS subject`;
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
