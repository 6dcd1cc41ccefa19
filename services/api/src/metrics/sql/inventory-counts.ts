import type { Queryable } from '@brokkr/db';

export interface InventoryCounts {
  active_agents: number;
  stacks: number;
  deployment_objects: number;
}

export async function inventoryCounts(db: Queryable): Promise<InventoryCounts> {
  const { rows } = await db.query<InventoryCounts>(
    `SELECT (SELECT count(*) FROM agents WHERE deleted_at IS NULL AND status = 'ACTIVE')::int AS active_agents,
            (SELECT count(*) FROM stacks WHERE deleted_at IS NULL)::int AS stacks,
            (SELECT count(*) FROM deployment_objects WHERE deleted_at IS NULL)::int AS deployment_objects`,
  );
  return rows[0] ?? { active_agents: 0, stacks: 0, deployment_objects: 0 };
}
