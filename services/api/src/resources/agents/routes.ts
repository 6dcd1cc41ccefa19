import { agentSchema } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { generatePak } from '@brokkr/pak';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { agentNotFound } from '../../errors/catalogue.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { visibleAgents } from './access.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { agentSearchQuery, agentUpdateSchema, createAgentResponseSchema, newAgentSchema, rotateAgentPakResponseSchema } from './schemas.ts';
import { createAgent } from './sql/create-agent.ts';
import { softDeleteAgent } from './sql/delete-agent.ts';
import { findAgent, findAgentByName, unknownGeneratorIds } from './sql/queries.ts';
import type { AgentRow } from '../../domain/agent-row.ts';
import { rotateAgentPak } from './sql/rotate-agent-pak.ts';
import { updateAgent, type AgentChanges } from './sql/update-agent.ts';

const tags = ['agents'];
const invalidAgent = errorKind(400, 'invalid_agent', 'name and cluster_name must not be blank');
const invalidGeneratorId = errorKind(400, 'invalid_generator_id', 'A generator does not exist');
const nameAndClusterRequired = errorKind(400, 'name_and_cluster_required', 'Both name and cluster_name query parameters are required');
const statusChangeForbidden = errorKind(403, 'status_change_forbidden', "Only an admin can change an agent's status");

/** Brokkr applies only string values of the fields it knows; anything else counts as absent. */
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The statuses Brokkr's agent understands; anything else would silently park it (docs/compatibility.md). */
const AGENT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;

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

/**
 * Only an admin activates or deactivates an agent (docs/security.md, "Deactivation"): the agent
 * itself may send its current status back, never another one.
 */
const writeUpdate = raising(async (db: Queryable, identity: Identity, id: string, changes: AgentChanges): Promise<AgentRow | undefined> => {
  if (identity.admin || changes.status === undefined) return updateAgent(db, id, changes);
  const { status, ...others } = changes;
  const row = await updateAgent(db, id, others, status);
  if (!row && (await findAgent(db, id))) throw statusChangeForbidden({ status });
  return row;
}, statusChangeForbidden);

export const agentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents',
    summary: 'List agents (admin: all; generator: those registered with it)',
    tags,
    access: 'any',
    responses: { 200: { description: 'Agents', schema: agentSchema.array() } },
    errors: [visibleAgents],
    handler: async ({ identity, ctx }) => json(200, await visibleAgents(ctx, identity)),
  }),

  defineRoute({
    method: 'post',
    path: '/agents',
    summary: 'Create an agent (INACTIVE) and its PAK',
    tags,
    access: 'admin',
    body: newAgentSchema,
    responses: { 201: { description: 'The agent and its PAK (shown once)', schema: createAgentResponseSchema } },
    errors: [invalidGeneratorId, invalidAgent, uniqueViolation],
    async handler({ body, identity, ctx }) {
      const generatorIds = [...new Set(body.generator_ids ?? [])];
      const unknown = await unknownGeneratorIds(ctx.db.pool, generatorIds);
      if (unknown.length > 0) {
        throw invalidGeneratorId.with(`Generator ${unknown[0]} does not exist`, { generator_ids: unknown });
      }
      if (body.name.trim() === '' || body.cluster_name.trim() === '') throw invalidAgent();
      const { pak, hash } = generatePak();
      const agent = await ctx.transact(async (tx) => {
        const row = await createAgent(tx.client, { name: body.name, clusterName: body.cluster_name, pakHash: hash, generatorIds });
        tx.emit('agent.registered', {
          agent_id: row.id,
          name: row.name,
          cluster_name: row.cluster_name,
          status: row.status,
          created_at: row.created_at.toISOString(),
        });
        return row;
      });
      const { name, cluster_name } = agent;
      await ctx.audit({
        actor: identity,
        action: 'agent.created',
        resourceType: 'agent',
        resourceId: agent.id,
        details: { name, cluster_name },
      });
      await ctx.audit({
        actor: identity,
        action: 'pak.created',
        resourceType: 'pak',
        resourceId: agent.id,
        details: { entity: 'agent', name },
      });
      return json(201, { agent, initial_pak: pak });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/',
    summary: 'Find an agent by name and cluster (the agent calls this at start-up)',
    description: 'The trailing slash is part of the path. The lookup happens before the authorization check (Brokkr order).',
    tags,
    access: 'any',
    query: agentSearchQuery,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: [nameAndClusterRequired, agentNotFound, requireAdminOrSelf],
    async handler({ query, identity, ctx }) {
      const name = asString(query.name);
      const clusterName = asString(query.cluster_name);
      if (name === undefined || clusterName === undefined) {
        throw nameAndClusterRequired();
      }
      const agent = await findAgentByName(ctx.db.pool, name, clusterName);
      if (!agent) throw agentNotFound();
      requireAdminOrSelf(identity, agent.id);
      return json(200, agent);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id',
    summary: 'Get an agent',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: [requireAdminOrSelf, agentNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const agent = await findAgent(ctx.db.pool, params.id);
      if (!agent) throw agentNotFound();
      return json(200, agent);
    },
  }),

  defineRoute({
    method: 'put',
    path: '/agents/:id',
    summary: 'Update an agent (string name, cluster_name and status; other fields are ignored)',
    description:
      'Setting `status` to `ACTIVE` lets the agent work. Only an admin may change `status`; the agent may change ' +
      'its own name and cluster_name (and send its current status back).',
    tags,
    access: 'any',
    params: idParams,
    body: agentUpdateSchema,
    responses: { 200: { description: 'The updated agent', schema: agentSchema } },
    errors: [requireAdminOrSelf, invalidAgent, writeUpdate, agentNotFound, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const changes = changesFrom(body);
      const agent = await ctx.transact(async (tx) => {
        const row = await writeUpdate(tx.client, identity, params.id, changes);
        // Activation (or deactivation) changes what target-state returns.
        if (row) tx.notifyAgents([row.id]);
        return row;
      });
      if (!agent) throw agentNotFound();
      const { name, cluster_name, status } = agent;
      await ctx.audit({
        actor: identity,
        action: 'agent.updated',
        resourceType: 'agent',
        resourceId: agent.id,
        details: { name, cluster_name, status },
      });
      return json(200, agent);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/agents/:id',
    summary: 'Delete an agent (soft; its PAK stops working on every replica at once)',
    description: 'Answers 204 also when the agent does not exist (Brokkr behaviour).',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 204: { description: 'Deleted (or already absent)' } },
    async handler({ params, identity, ctx }) {
      const deleted = await ctx.transact(async (tx) => {
        const row = await softDeleteAgent(tx.client, params.id);
        if (!row) return undefined;
        tx.emit('agent.deregistered', { agent_id: params.id, deleted_at: row.deleted_at.toISOString() });
        tx.notifyAgents([params.id]);
        tx.afterCommit(() => ctx.auth.invalidate([row.pak_hash]));
        return row;
      });
      if (deleted) await ctx.audit({ actor: identity, action: 'agent.deleted', resourceType: 'agent', resourceId: params.id });
      return noContent();
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/rotate-pak',
    summary: "Replace an agent's PAK (the old one stops working on every replica at once)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The agent and its new PAK', schema: rotateAgentPakResponseSchema } },
    errors: [requireAdminOrSelf, agentNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const { pak, hash } = generatePak();
      const rotated = await ctx.transact(async (tx) => {
        const result = await rotateAgentPak(tx.client, params.id, hash);
        if (result) tx.afterCommit(() => ctx.auth.invalidate([result.oldHash]));
        return result;
      });
      if (!rotated) throw agentNotFound();
      const { agent } = rotated;
      await ctx.audit({
        actor: identity,
        action: 'pak.rotated',
        resourceType: 'agent',
        resourceId: agent.id,
        details: { agent_name: agent.name },
      });
      return json(200, { agent, pak });
    },
  }),
];
