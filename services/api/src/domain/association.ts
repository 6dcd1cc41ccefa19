/**
 * The stack ↔ agent association rule, as SQL fragments shared by the
 * target-state query, the stacks listing and the wake-up fan-out; and, at the end of this file,
 * the work-order ↔ agent rule. This file is their one TypeScript home. The other places that
 * spell them say "same rule as services/api/src/domain/association.ts":
 *   - agents-for-stacks.ts (beside this file): the rule read from the stack side, for wake lists
 *     (test/wake-list.test.ts checks it agrees);
 *   - migration 0014's SQL function brokkr_stack_agents(), which maintenance's rollouts and
 *     stack expiry call (test/rollout-targeting.test.ts checks it agrees);
 *   - services/maintenance/src/sql/work-order-agents.ts, the work-order rule for maintenance.
 *
 * A stack is associated with an agent when
 *   a. it carries any of the agent's labels (exact string equality), or
 *   b. it carries any of the agent's annotation pairs (exact key and value), or
 *   c. there is an explicit agent_targets row;
 * legs a and b count only for stacks whose generator the agent is registered with
 * (agent_generator_registrations): registration is the agent's consent to a generator's
 * label/annotation targeting. Leg c needs no registration at read time (it was checked when the
 * target was created).
 *
 * Deleted stacks are NOT filtered out here: their label, annotation and target rows survive the
 * soft delete, which is how a deleted stack stays associated long enough to serve its deletion
 * marker. Callers decide what a deleted stack means for them.
 */

/**
 * `(agent_id, stack_id)` pairs for the agents of the CTE/relation named `agentsRelation` (a
 * relation with an `id` column). Each leg is driven by an index on the matching column
 * (stack_labels(label), stack_annotations(key, value), agent_targets(agent_id)).
 */
export function associationPairs(agentsRelation: string): string {
  return `
    SELECT al.agent_id, sl.stack_id
      FROM ${agentsRelation} ag
      JOIN agent_labels al ON al.agent_id = ag.id
      JOIN stack_labels sl ON sl.label = al.label
      JOIN stacks s ON s.id = sl.stack_id
      JOIN agent_generator_registrations r ON r.agent_id = al.agent_id AND r.generator_id = s.generator_id
    UNION
    SELECT aa.agent_id, sa.stack_id
      FROM ${agentsRelation} ag
      JOIN agent_annotations aa ON aa.agent_id = ag.id
      JOIN stack_annotations sa ON sa.key = aa.key AND sa.value = aa.value
      JOIN stacks s ON s.id = sa.stack_id
      JOIN agent_generator_registrations r ON r.agent_id = aa.agent_id AND r.generator_id = s.generator_id
    UNION
    SELECT t.agent_id, t.stack_id
      FROM ${agentsRelation} ag
      JOIN agent_targets t ON t.agent_id = ag.id`;
}

/**
 * The work-order ↔ agent rule: "this order targets agent $n" (Brokkr's rule, an OR): an explicit target, any shared label, or any
 * shared (key, value) annotation. `w` is the work_orders alias.
 */
export const targetsAgent = (param: string) => `(
  EXISTS (SELECT 1 FROM work_order_targets t WHERE t.work_order_id = w.id AND t.agent_id = ${param})
  OR EXISTS (SELECT 1 FROM work_order_labels l JOIN agent_labels al ON al.label = l.label
              WHERE l.work_order_id = w.id AND al.agent_id = ${param})
  OR EXISTS (SELECT 1 FROM work_order_annotations o JOIN agent_annotations aa ON aa.key = o.key AND aa.value = o.value
              WHERE o.work_order_id = w.id AND aa.agent_id = ${param}))`;
