/**
 * The stack ↔ agent association rule, as SQL fragments shared by the
 * target-state query, the stacks listing and the wake-up fan-out; its one-pair form for what
 * agents report (servedToAgent); and, at the end of this file,
 * the work-order ↔ agent rule. This file is their one TypeScript home. The other places that
 * spell them say "same rule as services/api/src/domain/association.ts":
 *   - agents-for-stacks.ts (beside this file): the rule read from the stack side, for wake lists
 *     (test/wake-list.test.ts checks it agrees);
 *   - migration 0014's SQL function brokkr_stack_agents(), which maintenance's rollouts and
 *     stack expiry call (test/rollout-targeting.test.ts checks it agrees);
 *   - services/maintenance/src/sql/work-order-agents.ts, the work-order rule for maintenance, and
 *     resources/work-orders/sql/create-work-order.ts, whom a new order wakes
 *     (test/work-order-targeting.test.ts checks all three agree).
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
 * The rule for one agent and one deployment object, as an SQL condition: the object is one the
 * agent is, or was, served. Its stack is associated with the agent (the three legs above, each a
 * probe of a unique index from the pair; deleted stacks count, so a deletion marker is served), or
 * the agent already reported an event on the object: it applied it while it was served, and the
 * DELETED event for a stack no longer targeted arrives after the association is gone. `object`
 * and `agent` are SQL uuid expressions. What agents report (events, health) is accepted only for
 * such objects (docs/security.md, "Agents report only on what they are served").
 */
export function servedToAgent(object: string, agent: string): string {
  // OFFSET 0 keeps the object's stack a subquery of its own (two primary-key probes): flattened,
  // the planner scanned every stack against the OR of the legs below.
  return `EXISTS (
    SELECT 1 FROM (SELECT sd.id, sd.stack_id, s.generator_id FROM deployment_objects sd JOIN stacks s ON s.id = sd.stack_id
                    WHERE sd.id = ${object} OFFSET 0) ss
     WHERE (EXISTS (SELECT 1 FROM agent_targets t WHERE t.agent_id = ${agent} AND t.stack_id = ss.stack_id)
            OR (EXISTS (SELECT 1 FROM agent_generator_registrations r WHERE r.agent_id = ${agent} AND r.generator_id = ss.generator_id)
                AND (EXISTS (SELECT 1 FROM stack_labels sl JOIN agent_labels al ON al.label = sl.label
                              WHERE sl.stack_id = ss.stack_id AND al.agent_id = ${agent})
                     OR EXISTS (SELECT 1 FROM stack_annotations sa JOIN agent_annotations aa ON aa.key = sa.key AND aa.value = sa.value
                                 WHERE sa.stack_id = ss.stack_id AND aa.agent_id = ${agent})))
            OR EXISTS (SELECT 1 FROM agent_events e WHERE e.agent_id = ${agent} AND e.deployment_object_id = ss.id AND e.deleted_at IS NULL)))`;
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
