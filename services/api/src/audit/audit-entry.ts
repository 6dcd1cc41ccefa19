import { randomUUID } from 'node:crypto';
import type { AuditRecord, AuditResourceType } from '@brokkr/contracts';
import { actorOf, type Identity } from '../auth/identity.ts';

export type { AuditRecord, AuditResourceType };

export interface AuditInput {
  /** The real caller, or 'system' for actions nobody identifiable took. */
  actor: Identity | 'system';
  action: string;
  resourceType: AuditResourceType;
  resourceId?: string | null;
  details?: Record<string, unknown> | null;
  ipAddress?: string | null;
  userAgent?: string | null;
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
