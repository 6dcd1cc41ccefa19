import type { OutboxRow } from '@brokkr/contracts';
import type { TaskClient } from './queryable.ts';

/** A task's events, written in its transaction (the same statement the api's outbox uses). */
export async function insertOutboxRows(db: TaskClient, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO outbox (id, event_type, subject, payload, headers)
     SELECT id, event_type, subject, payload, headers
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, event_type text, subject text, payload jsonb, headers jsonb)`,
    [JSON.stringify(rows)],
  );
}
