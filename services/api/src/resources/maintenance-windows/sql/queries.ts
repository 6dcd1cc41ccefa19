import type { Queryable } from '@brokkr/db';
import { BYPASS_COLUMNS, WINDOW_COLUMNS, type BypassRow, type WindowRow } from './window-row.ts';

/** One window; `owner` (a generator's id) limits it to that generator's windows. */
export async function findWindow(db: Queryable, id: string, owner: string | undefined, lock = false): Promise<WindowRow | undefined> {
  const { rows } = await db.query<WindowRow>(
    `SELECT ${WINDOW_COLUMNS} FROM maintenance_windows
      WHERE id = $1 AND ($2::uuid IS NULL OR owner_generator_id = $2)${lock ? ' FOR UPDATE' : ''}`,
    [id, owner ?? null],
  );
  return rows[0];
}

/** Every window (the admin's view), or a generator's own, oldest first. Bounded by what tenants may store. */
export async function listWindows(db: Queryable, owner: string | undefined): Promise<WindowRow[]> {
  const { rows } = await db.query<WindowRow>(
    `SELECT ${WINDOW_COLUMNS} FROM maintenance_windows
      WHERE $1::uuid IS NULL OR owner_generator_id = $1 ORDER BY created_at, id LIMIT 1000`,
    [owner ?? null],
  );
  return rows;
}

/** The bypasses of these windows that have neither expired nor been ended. */
export async function liveBypasses(db: Queryable, windowIds: string[]): Promise<BypassRow[]> {
  const { rows } = await db.query<BypassRow>(
    `SELECT ${BYPASS_COLUMNS} FROM maintenance_window_bypasses
      WHERE window_id = ANY($1::uuid[]) AND ended_at IS NULL AND expires_at > now() ORDER BY expires_at`,
    [windowIds],
  );
  return rows;
}

/** How many windows a generator owns (a tenant's count is bounded). */
export async function countOwnedWindows(db: Queryable, owner: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM maintenance_windows WHERE owner_generator_id = $1', [
    owner,
  ]);
  return rows[0]!.n;
}

/** Live agents carrying every one of the labels (none: every live agent): whom a window selects. */
export async function agentsWithLabels(db: Queryable, labels: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT a.id FROM agents a
      WHERE a.deleted_at IS NULL
        AND $1::text[] <@ coalesce((SELECT array_agg(l.label::text) FROM agent_labels l WHERE l.agent_id = a.id), '{}')`,
    [labels],
  );
  return rows.map((r) => r.id);
}

/** Which of these stacks are live and owned by the generator (all of them, for the admin). */
export async function ownedLiveStacks(
  db: Queryable,
  stackIds: string[],
  generator: string | undefined,
): Promise<{ id: string; owned: boolean }[]> {
  const { rows } = await db.query<{ id: string; owned: boolean }>(
    `SELECT id, ($2::uuid IS NULL OR generator_id = $2) AS owned FROM stacks WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL`,
    [stackIds, generator ?? null],
  );
  return rows;
}
