import type { Identity } from '../auth/identity.ts';
import { generatePak } from '@brokkr/pak';
import type { ApiContext } from '../context.ts';
import { errorKind, raising } from '../http/api-error.ts';
import { uniqueViolation } from '../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { agentNotFound, asString, invalidAgent, requireAdminOrSelf } from './agents-access.ts';
import { agentSchema, agentSearchQuery, createAgentResponseSchema, newAgentSchema } from './agents-schemas.ts';
import {
  findAgent,
  findAgentByName,
  findGenerator,
  insertAgent,
  listAgents,
  listAgentsOfGenerator,
  registerAgent,
  softDeleteAgent,
  unknownGeneratorIds,
  type AgentRow,
} from './agents-sql.ts';
import { agentUpdateRoute } from './agents-update.ts';

const tags = ['agents'];
const generatorRequired = errorKind(403, 'generator_required', 'Only an admin or a generator may list agents');
const generatorNotFound = errorKind(404, 'generator_not_found', 'Generator not found');
const systemGeneratorNotATenant = errorKind(403, 'system_generator_not_a_tenant', 'The system generator has no tenant view');
const invalidGeneratorId = errorKind(400, 'invalid_generator_id', 'A generator does not exist');
const nameAndClusterRequired = errorKind(400, 'name_and_cluster_required', 'Both name and cluster_name query parameters are required');

/** Admin: every live agent. Generator: its tenants (the agents registered with it). Agents: refused. */
const visibleAgents = raising(
  async (ctx: ApiContext, identity: Identity): Promise<AgentRow[]> => {
    if (identity.admin) return listAgents(ctx.db.pool);
    if (!identity.generator) throw generatorRequired();
    const generator = await findGenerator(ctx.db.pool, identity.generator);
    if (!generator) throw generatorNotFound();
    if (generator.is_system) throw systemGeneratorNotATenant();
    return listAgentsOfGenerator(ctx.db.pool, identity.generator);
  },
  generatorRequired,
  generatorNotFound,
  systemGeneratorNotATenant,
);


export const agentCrudRoutes: AnyRoute[] = [
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
        const row = await insertAgent(tx.client, { name: body.name, clusterName: body.cluster_name, pakHash: hash });
        await registerAgent(tx.client, row.id, generatorIds);
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
      await ctx.audit({ actor: identity, action: 'agent.created', resourceType: 'agent', resourceId: agent.id, details: { name, cluster_name } });
      await ctx.audit({ actor: identity, action: 'pak.created', resourceType: 'pak', resourceId: agent.id, details: { entity: 'agent', name } });
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

  agentUpdateRoute,

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
];
