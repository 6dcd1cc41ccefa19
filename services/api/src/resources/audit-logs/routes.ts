import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { auditLogQuerySchema, auditLogListSchema } from './schemas.ts';
import { queryAuditLogs, type AuditLogRow } from './sql/queries.ts';

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
    query: auditLogQuerySchema,
    responses: { 200: { description: 'A page of audit log entries', schema: auditLogListSchema } },
    async handler({ query, ctx }) {
      const { limit, offset, ...filter } = query;
      const { rows, total } = await queryAuditLogs(ctx.db.pool, filter, { limit, offset });
      return json(200, { logs: rows.map(present), total, count: rows.length, limit, offset });
    },
  }),
];
