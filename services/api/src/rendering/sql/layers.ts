import type { Queryable } from '@brokkr/db';
import type { OverrideLayer } from '@brokkr/overrides';

/** A stack's override layers (every one; which apply to an agent is layers.ts's rule) and the revision they are. */
export interface StackLayers {
  revision: number;
  layers: OverrideLayer[];
}

/** One statement, so the revision is the layers' own (the stack row counts every change of them: migration 0026). */
export async function stackLayers(db: Queryable, stackId: string): Promise<StackLayers> {
  const { rows } = await db.query<{ revision: string; layers: OverrideLayer[] }>(
    `SELECT s.layers_revision AS revision,
            coalesce((SELECT jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'priority', o.priority, 'selector', o.selector,
                                                          'layer_values', o.layer_values, 'patches', o.patches)
                                       ORDER BY o.priority, o.name)
                        FROM stack_overrides o WHERE o.stack_id = s.id), '[]') AS layers
       FROM stacks s WHERE s.id = $1`,
    [stackId],
  );
  const row = rows[0];
  return { revision: Number(row?.revision ?? 0), layers: row?.layers ?? [] };
}
