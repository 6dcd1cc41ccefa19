import { randomUUID } from 'node:crypto';
import { actorOf, type ActorType, type Identity } from '../auth/identity.ts';

/** Resource types of Brokkr's audit log (contract §8). */
export type AuditResourceType =
  | 'agent'
  | 'stack'
  | 'generator'
  | 'template'
  | 'webhook_subscription'
  | 'work_order'
  | 'pak'
  | 'config'
  | 'system';

export interface AuditInput {
  /** The real caller (DESIGN §4), or 'system' for actions nobody identifiable took. */
  actor: Identity | 'system';
  action: string;
  resourceType: AuditResourceType;
  resourceId?: string | null;
  details?: Record<string, unknown> | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/**
 * The wire form on `brokkr.audit.<action>` (and the audit_logs row): snake_case, the id chosen
 * here so that the audit-writer's insert is idempotent across redeliveries.
 */
export interface AuditRecord {
  id: string;
  timestamp: string;
  actor_type: ActorType;
  actor_id: string | null;
  action: string;
  resource_type: AuditResourceType;
  resource_id: string | null;
  details: Record<string, unknown> | null;
  ip_address: string | null;
  user_agent: string | null;
}

export function buildAuditRecord(input: AuditInput, now: Date = new Date()): AuditRecord {
  const actor = input.actor === 'system' ? { actor_type: 'system' as const, actor_id: null } : actorOf(input.actor);
  return {
    id: randomUUID(),
    timestamp: now.toISOString(),
    ...actor,
    action: input.action,
    resource_type: input.resourceType,
    resource_id: input.resourceId ?? null,
    details: input.details ?? null,
    ip_address: input.ipAddress ?? null,
    user_agent: input.userAgent ?? null,
  };
}
