import type { Queryable } from '@brokkr/db';
import type { AuditEntry } from './audit-entry.ts';

/**
 * Inserts a batch in one statement. `ON CONFLICT (id) DO NOTHING` makes the write idempotent:
 * a batch that was committed but not acknowledged (writer killed between the two) comes back
 * from JetStream and is absorbed here instead of being doubled.
 * Returns how many rows were new.
 */
export async function insertAuditEntries(db: Queryable, entries: AuditEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const rows = entries.map((e) => ({
    id: e.id,
    timestamp: e.timestamp,
    actor_type: e.actor_type,
    actor_id: e.actor_id ?? null,
    action: e.action,
    resource_type: e.resource_type,
    resource_id: e.resource_id ?? null,
    details: e.details ?? null,
    ip_address: e.ip_address ?? null,
    user_agent: e.user_agent ?? null,
  }));
  const result = await db.query(
    `INSERT INTO audit_logs (id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent)
     SELECT id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent
       FROM jsonb_to_recordset($1::jsonb) AS r(
         id uuid, timestamp timestamptz, actor_type text, actor_id uuid, action text, resource_type text,
         resource_id uuid, details jsonb, ip_address text, user_agent text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(rows)],
  );
  return result.rowCount ?? 0;
}
