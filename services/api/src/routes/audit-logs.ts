import { z } from 'zod';
import { defineRoute, json, type AnyRoute } from '../http/route.ts';
import { timestamp, uuid } from '../http/schemas.ts';
import { queryAuditLogs, type AuditLogRow } from '../sql/audit-logs.ts';

const clampedInt = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform((v) => Math.min(max, Math.max(min, Number(v))))
    .optional()
    .transform((v) => v ?? fallback);

const querySchema = z.object({
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

const listSchema = z
  .object({ logs: auditLogEntrySchema.array(), total: z.number().int(), count: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'AuditLogListResponse' });

/** ip_address and user_agent are omitted when null (Brokkr's serialization). */
function present(row: AuditLogRow): Record<string, unknown> {
  const { ip_address, user_agent, ...rest } = row;
  return { ...rest, ...(ip_address === null ? {} : { ip_address }), ...(user_agent === null ? {} : { user_agent }) };
}

export const auditLogRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/admin/audit-logs',
    summary: 'Search the audit log (newest first)',
    tags: ['admin'],
    access: 'admin',
    query: querySchema,
    responses: { 200: { description: 'A page of audit log entries', schema: listSchema } },
    async handler({ query, ctx }) {
      const { limit, offset, ...filter } = query;
      const { rows, total } = await queryAuditLogs(ctx.db.pool, filter, { limit, offset });
      return json(200, { logs: rows.map(present), total, count: rows.length, limit, offset });
    },
  }),
];
