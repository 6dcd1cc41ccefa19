import type { Queryable } from '@brokkr/db';
import { BYPASS_COLUMNS, type BypassRow } from './window-row.ts';

export interface NewBypass {
  windowId: string;
  reason: string;
  /** 'admin' or the generator's id. */
  createdBy: string;
  expiresAt: string;
}

export async function createBypass(db: Queryable, { windowId, reason, createdBy, expiresAt }: NewBypass): Promise<BypassRow> {
  const { rows } = await db.query<BypassRow>(
    `INSERT INTO maintenance_window_bypasses (window_id, reason, created_by, expires_at)
     VALUES ($1, $2, $3, $4) RETURNING ${BYPASS_COLUMNS}`,
    [windowId, reason, createdBy, expiresAt],
  );
  return rows[0]!;
}
