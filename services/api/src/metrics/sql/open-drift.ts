import type { Queryable } from '@brokkr/db';

export interface OpenDrift {
  stack_id: string;
  stack_name: string;
  open: number;
}

/** Open drift records per live stack that has any (the partial index of open records). */
export async function openDriftPerStack(db: Queryable): Promise<OpenDrift[]> {
  const { rows } = await db.query<OpenDrift>(
    `SELECT s.id AS stack_id, s.name AS stack_name, o.open
       FROM (SELECT stack_id, count(*)::int AS open FROM drift_records WHERE state = 'open' GROUP BY stack_id) o
       JOIN stacks s ON s.id = o.stack_id AND s.deleted_at IS NULL`,
  );
  return rows;
}
