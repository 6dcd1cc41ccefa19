import { z } from 'zod';
import { timestamp, uuid } from '../../http/schemas.ts';

const clampedInt = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform((v) => Math.min(max, Math.max(min, Number(v))))
    .optional()
    .transform((v) => v ?? fallback);

export const auditLogQuerySchema = z.object({
  actor_type: z.string().optional(),
  actor_id: uuid().optional(),
  action: z.string().optional().meta({ description: 'Exact action, or a prefix ending in `*` (e.g. `agent.*`)' }),
  resource_type: z.string().optional(),
  resource_id: uuid().optional(),
  from: z.iso.datetime({ offset: true }).optional().meta({ description: 'Inclusive lower bound on timestamp' }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: 'Exclusive upper bound on timestamp' }),
  limit: clampedInt(100, 1, 1000),
  offset: clampedInt(0, 0, Number.MAX_SAFE_INTEGER),
});

const auditLogEntrySchema = z
  .object({
    id: uuid(),
    timestamp: timestamp(),
    actor_type: z.string(),
    actor_id: uuid().nullable(),
    action: z.string(),
    resource_type: z.string(),
    resource_id: uuid().nullable(),
    details: z.unknown(),
    ip_address: z.string().optional(),
    user_agent: z.string().optional(),
    created_at: timestamp(),
    actor_name: z.string().nullable(),
  })
  .meta({ id: 'AuditLogEntry' });

export const auditLogListSchema = z
  .object({
    logs: auditLogEntrySchema.array(),
    total: z.number().int(),
    count: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'AuditLogListResponse' });
