import { prepared, type Queryable } from '@brokkr/db';
import { servedToAgent, targetsAgent } from '../../../domain/association.ts';

/**
 * Of the ids an agent asks signatures for, those it is (or was) served: a signature names its
 * stack, its generator and whom it targets, which is another tenant's business for any other
 * object. One statement, a few index probes per id (at most 100 of each).
 */
const servedIdsStatement = prepared(
  'brokkr_signatures_served_ids',
  `SELECT coalesce((SELECT array_agg(i.id) FROM unnest($2::uuid[]) AS i(id) WHERE ${servedToAgent('i.id', '$1::uuid')}), '{}') AS objects,
          coalesce((SELECT array_agg(w.id) FROM work_orders w WHERE w.id = ANY($3::uuid[]) AND ${targetsAgent('$1::uuid')}), '{}') AS work_orders`,
);

export async function servedIds(
  db: Queryable,
  agentId: string,
  objectIds: string[],
  workOrderIds: string[],
): Promise<{ objects: string[]; work_orders: string[] }> {
  if (objectIds.length === 0 && workOrderIds.length === 0) return { objects: [], work_orders: [] };
  const { rows } = await db.query<{ objects: string[]; work_orders: string[] }>(servedIdsStatement([agentId, objectIds, workOrderIds]));
  return rows[0]!;
}
