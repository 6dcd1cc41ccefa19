/**
 * The live agents the work orders of `rel` (a CTE or table with an `id` column) target, as a
 * text[] expression (Brokkr's rule, an OR): explicit targets, any shared label, any shared
 * (key, value) annotation. Same rule as services/api/src/domain/association.ts (targetsAgent). The targeting tables are not changed by the statements using it, so
 * a data-modifying CTE's RETURNING rows can be `rel`.
 */
export const workOrderAgents = (rel: string) => `(
  SELECT coalesce(array_agg(DISTINCT x.agent_id::text), '{}') FROM (
    SELECT t.agent_id FROM work_order_targets t WHERE t.work_order_id IN (SELECT id FROM ${rel})
    UNION
    SELECT al.agent_id FROM work_order_labels l JOIN agent_labels al ON al.label = l.label
     WHERE l.work_order_id IN (SELECT id FROM ${rel})
    UNION
    SELECT aa.agent_id FROM work_order_annotations o JOIN agent_annotations aa ON aa.key = o.key AND aa.value = o.value
     WHERE o.work_order_id IN (SELECT id FROM ${rel})
  ) x JOIN agents a ON a.id = x.agent_id AND a.deleted_at IS NULL)`;

/** What a work-order statement changed: how many orders, and whom to wake. */
export interface WorkOrderChange {
  count: number;
  agentIds: string[];
}
