import type { Queryable } from '@brokkr/db';
import { isAdminOrGenerator } from '../../auth/guards.ts';
import { errorKind, raising } from '../../http/api-error.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../agents/access.ts';
import { agentToRegister } from './access.ts';
import { registrationBodySchema, registrationSchema } from './schemas.ts';
import { deleteRegistration } from './sql/deregister-agent.ts';
import { findLiveGenerator, listAgentRegistrations, listRegistrations, liveAgentExists } from './sql/queries.ts';
import { insertRegistration } from './sql/register-agent.ts';

/**
 * Agent ↔ generator registrations: the agent's consent to a generator's label/annotation
 * targeting. Changing one wakes the agent (its target state may differ).
 */

const tags = ['generators'];
const generatorNotFound = errorKind(404, 'generator_not_found', 'Generator not found');
const agentNotFound = errorKind(404, 'agent_not_found', 'Agent not found');
const alreadyRegistered = errorKind(409, 'already_registered', 'The agent is already registered with this generator');
const notAuthorized = errorKind(403, 'not_authorized', 'Access denied to this generator');
const systemGeneratorNotATenant = errorKind(403, 'system_generator_not_a_tenant', 'The system generator is not a tenant');

const requireLive = raising(
  async (db: Queryable, generatorId: string, agentId: string): Promise<void> => {
    if (!(await findLiveGenerator(db, generatorId))) throw generatorNotFound();
    if (!(await liveAgentExists(db, agentId))) throw agentNotFound();
  },
  generatorNotFound,
  agentNotFound,
);

export const generatorRegistrationRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/generators/:id/register',
    summary: 'Register an agent with a generator (its stacks then match the agent by label/annotation)',
    tags,
    access: 'any',
    params: idParams,
    body: registrationBodySchema,
    bodyMode: 'optional-json',
    responses: { 201: { description: 'The registration', schema: registrationSchema } },
    errors: [agentToRegister, requireLive, alreadyRegistered],
    async handler({ params, body, identity, ctx }) {
      const agentId = agentToRegister(identity, body);
      const registration = await ctx.transact(async (tx) => {
        await requireLive(tx.client, params.id, agentId);
        const row = await insertRegistration(tx.client, agentId, params.id);
        if (!row) throw alreadyRegistered();
        tx.notifyAgents([agentId]);
        return row;
      });
      await ctx.audit({
        actor: identity,
        action: 'agent.registered',
        resourceType: 'agent',
        resourceId: agentId,
        details: { generator_id: params.id },
      });
      return json(201, registration);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/generators/:id/register',
    summary: "Deregister an agent from a generator (also removes the agent's targets on its stacks)",
    tags,
    access: 'any',
    params: idParams,
    body: registrationBodySchema,
    bodyMode: 'optional-json',
    responses: { 204: { description: 'Not registered any more (idempotent)' } },
    errors: [agentToRegister, generatorNotFound],
    async handler({ params, body, identity, ctx }) {
      const agentId = agentToRegister(identity, body);
      const removed = await ctx.transact(async (tx) => {
        if (!(await findLiveGenerator(tx.client, params.id))) throw generatorNotFound();
        const existed = await deleteRegistration(tx.client, agentId, params.id);
        if (existed) tx.notifyAgents([agentId]);
        return existed;
      });
      if (removed) {
        await ctx.audit({
          actor: identity,
          action: 'agent.deregistered',
          resourceType: 'agent',
          resourceId: agentId,
          details: { generator_id: params.id },
        });
      }
      return noContent();
    },
  }),

  defineRoute({
    method: 'get',
    path: '/generators/:id/registered-agents',
    summary: 'Agents registered with a generator',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Registrations', schema: registrationSchema.array() } },
    errors: [notAuthorized, generatorNotFound, systemGeneratorNotATenant],
    async handler({ params, identity, ctx }) {
      if (!isAdminOrGenerator(identity, params.id)) throw notAuthorized();
      const generator = await findLiveGenerator(ctx.db.pool, params.id);
      if (!generator) throw generatorNotFound();
      if (generator.is_system && !identity.admin) throw systemGeneratorNotATenant();
      return json(200, await listRegistrations(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/registrations',
    summary: 'The generators an agent is registered with',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Registrations', schema: registrationSchema.array() } },
    errors: [requireAdminOrSelf, agentNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      if (!(await liveAgentExists(ctx.db.pool, params.id))) throw agentNotFound();
      return json(200, await listAgentRegistrations(ctx.db.pool, params.id));
    },
  }),
];
