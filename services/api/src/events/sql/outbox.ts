import { prepared, type Queryable } from '@brokkr/db';
import { SUBJECTS } from '@brokkr/bus';
import type { DomainEvent, OutboxRow } from '@brokkr/contracts';

export type { OutboxRow };

export function outboxRow(event: DomainEvent, traceparent: string | undefined): OutboxRow {
  return {
    id: event.id,
    event_type: event.event_type,
    subject: SUBJECTS.event(event.event_type),
    payload: event,
    headers: traceparent ? { traceparent } : null,
  };
}

// Prepared: every write of the api runs these two.
const insertStatement = prepared(
  'brokkr_outbox_insert',
  `INSERT INTO outbox (id, event_type, subject, payload, headers)
   SELECT id, event_type, subject, payload, headers
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, event_type text, subject text, payload jsonb, headers jsonb)`,
);
const markPublishedStatement = prepared(
  'brokkr_outbox_published',
  'UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL',
);

/** All of a transaction's events in one statement. */
export async function insertOutboxRows(tx: Queryable, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(insertStatement([JSON.stringify(rows)]));
}

export async function markOutboxPublished(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(markPublishedStatement([ids]));
}
