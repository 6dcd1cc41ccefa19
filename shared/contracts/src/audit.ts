import { z } from 'zod';

export const ACTOR_TYPES = ['admin', 'agent', 'generator', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Resource types of Brokkr's audit log. */
export const AUDIT_RESOURCE_TYPES = [
  'agent',
  'stack',
  'generator',
  'template',
  'webhook_subscription',
  'work_order',
  'diagnostic_request',
  'pak',
  'config',
  'system',
  'maintenance_window',
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

/**
 * An audit entry as publishers put it on `brokkr.audit.<action>` and as the `audit_logs` row
 * holds it. The publisher chooses the id, so a redelivered message or a publisher's direct
 * insert of the same entry never makes a second row. Missing nullable fields read as null, so an
 * entry from an older publisher is still accepted.
 */
export const auditRecordSchema = z.object({
  id: z.guid(),
  timestamp: z.iso.datetime({ offset: true }),
  actor_type: z.enum(ACTOR_TYPES),
  actor_id: z.guid().nullable().default(null),
  action: z.string().min(1).max(100),
  resource_type: z.string().min(1).max(50),
  resource_id: z.guid().nullable().default(null),
  details: z.record(z.string(), z.unknown()).nullable().default(null),
  ip_address: z.string().nullable().default(null),
  user_agent: z.string().nullable().default(null),
});
export type AuditRecord = z.output<typeof auditRecordSchema>;
