import type { Queryable } from '@brokkr/db';

export interface AuditLogFilter {
  actor_type?: string | undefined;
  actor_id?: string | undefined;
  /** Exact, or a prefix when it ends with `*`. */
  action?: string | undefined;
  resource_type?: string | undefined;
  resource_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface AuditLogRow {
  id: string;
  timestamp: Date;
  actor_type: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: unknown;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
  actor_name: string | null;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** WHERE clause and values for the filter; every value is a bind parameter. */
export function auditWhere(filter: AuditLogFilter): { where: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    clauses.push(sql(`$${values.length}`));
  };
  if (filter.actor_type !== undefined) add((n) => `l.actor_type = ${n}`, filter.actor_type);
  if (filter.actor_id !== undefined) add((n) => `l.actor_id = ${n}`, filter.actor_id);
  if (filter.action?.endsWith('*')) add((n) => `l.action LIKE ${n} ESCAPE '\\'`, `${escapeLike(filter.action.slice(0, -1))}%`);
  else if (filter.action !== undefined) add((n) => `l.action = ${n}`, filter.action);
  if (filter.resource_type !== undefined) add((n) => `l.resource_type = ${n}`, filter.resource_type);
  if (filter.resource_id !== undefined) add((n) => `l.resource_id = ${n}`, filter.resource_id);
  if (filter.from !== undefined) add((n) => `l."timestamp" >= ${n}`, filter.from);
  if (filter.to !== undefined) add((n) => `l."timestamp" < ${n}`, filter.to);
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', values };
}

/**
 * The page and the total in one statement. actor_name is resolved at read time (a renamed agent
 * shows its current name; deleted agents and generators still resolve).
 */
export async function queryAuditLogs(
  db: Queryable,
  filter: AuditLogFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: AuditLogRow[]; total: number }> {
  const { where, values } = auditWhere(filter);
  const n = values.length;
  const { rows } = await db.query<AuditLogRow & { total: number | null }>(
    `WITH matching AS (SELECT l.* FROM audit_logs l ${where}),
          page AS (SELECT * FROM matching ORDER BY "timestamp" DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2})
     SELECT p.id, p."timestamp", p.actor_type, p.actor_id, p.action, p.resource_type, p.resource_id, p.details,
            p.ip_address, p.user_agent, p.created_at,
            CASE p.actor_type WHEN 'admin' THEN 'admin' WHEN 'system' THEN 'system'
                              WHEN 'agent' THEN a.name WHEN 'generator' THEN g.name END AS actor_name,
            (SELECT count(*) FROM matching)::int AS total
       FROM page p
       LEFT JOIN agents a ON p.actor_type = 'agent' AND a.id = p.actor_id
       LEFT JOIN generators g ON p.actor_type = 'generator' AND g.id = p.actor_id
      ORDER BY p."timestamp" DESC, p.id DESC`,
    [...values, page.limit, page.offset],
  );
  if (rows.length > 0) return { rows, total: rows[0]?.total ?? 0 };
  // An offset past the end returns no row to carry the total; count separately.
  const count = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM audit_logs l ${where}`, values);
  return { rows: [], total: count.rows[0]?.total ?? 0 };
}
