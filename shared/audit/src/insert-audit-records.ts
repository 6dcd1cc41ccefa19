import type { AuditRecord } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';

/**
 * Inserts entries in one statement. `ON CONFLICT (id) DO NOTHING` makes the write idempotent: an
 * entry the audit-writer committed but did not acknowledge comes back from JetStream, and an
 * entry a publisher inserted directly may also arrive through the stream; neither doubles.
 * Returns how many rows were new.
 */
export async function insertAuditRecords(db: Queryable, records: readonly AuditRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const result = await db.query(
    `INSERT INTO audit_logs (id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent)
     SELECT id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent
       FROM jsonb_to_recordset($1::jsonb) AS r(
         id uuid, timestamp timestamptz, actor_type text, actor_id uuid, action text, resource_type text,
         resource_id uuid, details jsonb, ip_address text, user_agent text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(records)],
  );
  return result.rowCount ?? 0;
}
