import { prepared, type Queryable } from '@brokkr/db';
import type { OutboxRow } from '@brokkr/contracts';

// Prepared: every transaction of the api that emits events runs it.
const insertStatement = prepared(
  'brokkr_outbox_insert',
  `INSERT INTO outbox (id, event_type, subject, payload, headers)
   SELECT id, event_type, subject, payload, headers
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, event_type text, subject text, payload jsonb, headers jsonb)`,
);

/** Rows built in JavaScript (envelope.ts's outboxRow), all of a transaction's in one statement. */
export async function insertOutboxRows(db: Queryable, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(insertStatement([JSON.stringify(rows)]));
}
