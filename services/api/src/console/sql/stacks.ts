import type { Queryable } from '@brokkr/db';

/** The console's stacks page: one page of live stacks with how many objects each holds. */

export interface StackSummary {
  id: string;
  name: string;
  description: string | null;
  generator_id: string;
  created_at: Date;
  object_count: number;
  latest_sequence: string | null;
}

/** LIKE wildcards in the search are literal characters. */
const likePattern = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const VISIBLE = `s.deleted_at IS NULL AND ($1::uuid IS NULL OR s.generator_id = $1) AND ($2::text = '%%' OR s.name ILIKE $2)`;

export async function stacksPage(
  db: Queryable,
  filter: { generatorId: string | null; search: string },
  page: { limit: number; offset: number },
): Promise<{ stacks: StackSummary[]; total: number }> {
  const params = [filter.generatorId, likePattern(filter.search)];
  const [rows, count] = await Promise.all([
    db.query<StackSummary>(
      `SELECT s.id, s.name, s.description, s.generator_id, s.created_at, d.object_count, d.latest_sequence
         FROM stacks s
         CROSS JOIN LATERAL (
           SELECT count(*)::int AS object_count, max(o.sequence_id)::text AS latest_sequence
             FROM deployment_objects o WHERE o.stack_id = s.id AND o.deleted_at IS NULL) d
        WHERE ${VISIBLE}
        ORDER BY s.name, s.id
        LIMIT $3 OFFSET $4`,
      [...params, page.limit, page.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM stacks s WHERE ${VISIBLE}`, params),
  ]);
  return { stacks: rows.rows, total: count.rows[0]?.n ?? 0 };
}
