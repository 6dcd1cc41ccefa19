/**
 * Inactive agents get no work (docs/security.md, "Deactivation"): an SQL condition that holds while
 * the agent named by the uuid expression `agentId` is live and ACTIVE. The pending lists of work
 * orders, diagnostics and previews and the claims of work orders and diagnostics add it to their
 * one statement, so an admin's deactivation takes effect on the agent's next request; the target-state
 * query tests the same in its `agent` CTE, and agent-delivered webhooks before their claim.
 * One probe of the agents primary key.
 */
export const agentIsActive = (agentId: string): string =>
  `EXISTS (SELECT 1 FROM agents active_agent
            WHERE active_agent.id = ${agentId} AND active_agent.deleted_at IS NULL AND active_agent.status = 'ACTIVE')`;
