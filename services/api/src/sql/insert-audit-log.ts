import type { Queryable } from '@brokkr/db';
import type { AuditRecord } from '../audit/audit-entry.ts';

/** The fallback when NATS cannot take an entry; the id makes a later duplicate harmless. */
export async function insertAuditLog(db: Queryable, r: AuditRecord): Promise<void> {
  await db.query(
    `INSERT INTO audit_logs (id, "timestamp", actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (id) DO NOTHING`,
    [r.id, r.timestamp, r.actor_type, r.actor_id, r.action, r.resource_type, r.resource_id, r.details, r.ip_address, r.user_agent],
  );
}
