import type { GrantInput } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { isAdminOrGenerator } from '../../auth/guards.ts';
import type { Identity } from '../../auth/identity.ts';
import type { TxScope } from '../../events/transact.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { agentNotFound, generatorNotFound, systemGeneratorNotATenant } from '../../errors/catalogue.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { agentToRegister } from './access.ts';
import { registrationView } from './grants.ts';
import { registrationBodySchema, registrationOutcomeSchema, registrationSchema } from './schemas.ts';
import { deleteRegistration } from './sql/deregister-agent.ts';
import { findLiveGenerator, listAgentRegistrations, listRegistrations, liveAgentExists, type RegistrationRow } from './sql/queries.ts';
import { insertRegistration } from './sql/register-agent.ts';
import { deleteRegistrationRequest, insertRegistrationRequest, isRegistered } from './sql/registration-requests.ts';

/**
 * Agent ↔ generator registrations: consent on both sides to the generator's label/annotation
 * targeting (docs/security.md). An admin's registration is in effect at once; an agent's own is
 * a request the generator or an admin approves (registration-request-routes.ts). Changing a
 * registration wakes the agent (its target state may differ).
 */

const tags = ['generators'];
const alreadyRegistered = errorKind(409, 'already_registered', 'The agent is already registered with this generator');
const notAuthorized = errorKind(403, 'not_authorized', 'Access denied to this generator');
const alreadyRequested = errorKind(
  409,
  'registration_pending',
  'The agent already asked to register with this generator; the generator or an admin must approve it',
);

type RegistrationOutcome = RegistrationRow & { status: 'approved' | 'pending' };

/**
 * The admin's side of the consent is given by the call itself; the agent's creates a request. The
 * grant comes from the cluster's side either way: the admin's, or the one the agent asks for.
 */
const registerOrRequest = raising(
  async (
    tx: TxScope,
    identity: Identity,
    pair: { agentId: string; generatorId: string; grant: GrantInput | null },
  ): Promise<RegistrationOutcome> => {
    const { agentId, generatorId, grant } = pair;
    if (identity.admin) {
      const row = await insertRegistration(tx.client, agentId, generatorId, grant);
      if (!row) throw alreadyRegistered();
      tx.notifyAgents([agentId]);
      return { ...row, status: 'approved' };
    }
    const request = await insertRegistrationRequest(tx.client, agentId, generatorId, grant);
    if (!request) throw (await isRegistered(tx.client, agentId, generatorId)) ? alreadyRegistered() : alreadyRequested();
    const { id, agent_id, generator_id, requested_at, registration_grant } = request;
    return { id, agent_id, generator_id, registered_at: requested_at, registration_grant, status: 'pending' };
  },
  alreadyRegistered,
  alreadyRequested,
);

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
    description:
      "An admin's registration is in effect at once (`status: approved`). An agent registering itself only asks " +
      "(`status: pending`): it gets none of the generator's stacks until the generator or an admin approves " +
      'the request (`POST /generators/{id}/registration-requests/{agent_id}/approve`).',
    tags,
    access: 'any',
    params: idParams,
    body: registrationBodySchema,
    bodyMode: 'optional-json',
    responses: { 201: { description: 'The registration, or the pending request', schema: registrationOutcomeSchema } },
    errors: [agentToRegister, requireLive, registerOrRequest],
    async handler({ params, body, identity, ctx }) {
      const agentId = agentToRegister(identity, body);
      const outcome = await ctx.transact(async (tx) => {
        await requireLive(tx.client, params.id, agentId);
        return registerOrRequest(tx, identity, { agentId, generatorId: params.id, grant: body?.grant ?? null });
      });
      await ctx.audit({
        actor: identity,
        action: outcome.status === 'approved' ? 'agent.registered' : 'agent.registration_requested',
        resourceType: 'agent',
        resourceId: agentId,
        details: { generator_id: params.id, ...(body?.grant ? { grant: body.grant } : {}) },
      });
      return json(201, { ...registrationView(outcome), status: outcome.status });
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/generators/:id/register',
    summary: "Deregister an agent from a generator (also removes the agent's targets on its stacks and its pending request)",
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
        await deleteRegistrationRequest(tx.client, agentId, params.id);
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
      return json(200, (await listRegistrations(ctx.db.pool, params.id)).map(registrationView));
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
      return json(200, (await listAgentRegistrations(ctx.db.pool, params.id)).map(registrationView));
    },
  }),
];
