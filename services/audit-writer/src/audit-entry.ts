import { z } from 'zod';

/**
 * An audit entry as the api (and the dispatcher) publish it on `brokkr.audit.<action>`. The id is
 * chosen by the publisher, so a redelivered message or a publisher's Postgres fallback insert of
 * the same entry can never produce a second row.
 */
export const auditEntrySchema = z.object({
  id: z.uuid(),
  timestamp: z.iso.datetime({ offset: true }),
  actor_type: z.enum(['admin', 'agent', 'generator', 'system']),
  actor_id: z.uuid().nullable().optional(),
  action: z.string().min(1).max(100),
  resource_type: z.string().min(1).max(50),
  resource_id: z.uuid().nullable().optional(),
  details: z.unknown().optional(),
  ip_address: z.string().nullable().optional(),
  user_agent: z.string().nullable().optional(),
});
export type AuditEntry = z.output<typeof auditEntrySchema>;
