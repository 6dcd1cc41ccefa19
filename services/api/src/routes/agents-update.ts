import { uniqueViolation } from '../http/db-errors.ts';
import { defineRoute, json } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { agentNotFound, asString, invalidAgent, requireAdminOrSelf } from './agents-access.ts';
import { agentSchema, agentUpdateSchema } from './agents-schemas.ts';
import { updateAgent, type AgentChanges } from './agents-sql.ts';

/** The statuses Brokkr's agent understands; anything else would silently park it (docs/compatibility.md). */
export const AGENT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;

function changesFrom(body: Record<string, unknown>): AgentChanges {
  const changes: AgentChanges = {};
  const name = asString(body.name);
  const clusterName = asString(body.cluster_name);
  const status = asString(body.status);
  if (name !== undefined) changes.name = name;
  if (clusterName !== undefined) changes.cluster_name = clusterName;
  if (status !== undefined) changes.status = status;
  if (status !== undefined && !(AGENT_STATUSES as readonly string[]).includes(status)) {
    throw invalidAgent.with(`status must be one of ${AGENT_STATUSES.join(', ')}`, { status });
  }
  if (name?.trim() === '' || clusterName?.trim() === '') throw invalidAgent();
  return changes;
}

export const agentUpdateRoute = defineRoute({
  method: 'put',
  path: '/agents/:id',
  summary: 'Update an agent (string name, cluster_name and status; other fields are ignored)',
  description: 'Setting `status` to `ACTIVE` lets the agent work; the agent may update itself.',
  tags: ['agents'],
  access: 'any',
  params: idParams,
  body: agentUpdateSchema,
  responses: { 200: { description: 'The updated agent', schema: agentSchema } },
  errors: [requireAdminOrSelf, invalidAgent, agentNotFound, uniqueViolation],
  async handler({ params, body, identity, ctx }) {
    requireAdminOrSelf(identity, params.id);
    const changes = changesFrom(body);
    const agent = await ctx.transact(async (tx) => {
      const row = await updateAgent(tx.client, params.id, changes);
      // Activation (or deactivation) changes what target-state returns.
      if (row) tx.notifyAgents([row.id]);
      return row;
    });
    if (!agent) throw agentNotFound();
    const { name, cluster_name, status } = agent;
    await ctx.audit({ actor: identity, action: 'agent.updated', resourceType: 'agent', resourceId: agent.id, details: { name, cluster_name, status } });
    return json(200, agent);
  },
});
