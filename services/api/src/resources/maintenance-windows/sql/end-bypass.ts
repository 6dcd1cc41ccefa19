import type { Queryable } from '@brokkr/db';
import { BYPASS_COLUMNS, type BypassRow } from './window-row.ts';

/** Ends a bypass that is still in force; undefined when there is none (unknown, expired or ended). */
export async function endBypass(db: Queryable, windowId: string, bypassId: string): Promise<BypassRow | undefined> {
  const { rows } = await db.query<BypassRow>(
    `UPDATE maintenance_window_bypasses SET ended_at = now()
      WHERE id = $1 AND window_id = $2 AND ended_at IS NULL AND expires_at > now() RETURNING ${BYPASS_COLUMNS}`,
    [bypassId, windowId],
  );
  return rows[0];
}
