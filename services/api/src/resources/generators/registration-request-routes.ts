import { requireAdminOrGenerator } from '../../auth/guards.ts';
import { errorKind } from '../../errors/api-error.ts';
import { agentNotFound, generatorNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { registrationRequestParams, registrationRequestSchema, registrationSchema } from './schemas.ts';
import { findLiveGenerator, liveAgentExists } from './sql/queries.ts';
import { approveRegistrationRequest, deleteRegistrationRequest, listPendingRequests } from './sql/registration-requests.ts';
import { registrationView } from './grants.ts';

/**
 * The generator's side of a registration (docs/security.md, "Registration is two-sided consent"):
 * an agent that registered itself waits here until the generator that owns the stacks, or an
 * admin, approves it. Only that generator sees and decides its requests.
 */

const tags = ['generators'];
const requestNotFound = errorKind(
  404,
  'registration_request_not_found',
  'The agent has no pending request to register with this generator',
);
const requestStale = errorKind(
  409,
  'registration_request_stale',
  'The agent was renamed (or moved to another cluster) after it asked; its request was withdrawn and it must ask again',
);

export const registrationRequestRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/generators/:id/registration-requests',
    summary: 'Agents waiting for this generator to approve their registration',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Pending requests, oldest first', schema: registrationRequestSchema.array() } },
    errors: [requireAdminOrGenerator, generatorNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      if (!(await findLiveGenerator(ctx.db.pool, params.id))) throw generatorNotFound();
      const requests = await listPendingRequests(ctx.db.pool, params.id);
      return json(
        200,
        requests.map(({ registration_grant, ...request }) => ({
          ...request,
          grant: registrationView({ ...request, registered_at: request.requested_at, registration_grant }).grant,
        })),
      );
    },
  }),

  defineRoute({
    method: 'post',
    path: '/generators/:id/registration-requests/:agent_id/approve',
    summary: "Approve an agent's request: the registration takes effect and the agent receives the generator's stacks",
    tags,
    access: 'any',
    params: registrationRequestParams,
    responses: { 201: { description: 'The registration', schema: registrationSchema } },
    errors: [requireAdminOrGenerator, generatorNotFound, agentNotFound, requestNotFound, requestStale],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      const approval = await ctx.transact(async (tx) => {
        if (!(await findLiveGenerator(tx.client, params.id))) throw generatorNotFound();
        if (!(await liveAgentExists(tx.client, params.agent_id))) throw agentNotFound();
        const outcome = await approveRegistrationRequest(tx.client, params.agent_id, params.id);
        if (outcome.outcome === 'approved') tx.notifyAgents([outcome.registration.agent_id]);
        return outcome;
      });
      // Thrown after the commit: the withdrawal of a stale request stands.
      if (approval.outcome === 'none') throw requestNotFound();
      if (approval.outcome === 'stale') throw requestStale();
      const registration = approval.registration;
      await ctx.audit({
        actor: identity,
        action: 'agent.registered',
        resourceType: 'agent',
        resourceId: registration.agent_id,
        details: { generator_id: params.id, ...(registration.registration_grant ? { grant: registration.registration_grant } : {}) },
      });
      return json(201, registrationView(registration));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/generators/:id/registration-requests/:agent_id',
    summary: "Decline an agent's request (idempotent)",
    tags,
    access: 'any',
    params: registrationRequestParams,
    responses: { 204: { description: 'No request any more' } },
    errors: [requireAdminOrGenerator, generatorNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      const declined = await ctx.transact(async (tx) => {
        if (!(await findLiveGenerator(tx.client, params.id))) throw generatorNotFound();
        return deleteRegistrationRequest(tx.client, params.agent_id, params.id);
      });
      if (declined) {
        await ctx.audit({
          actor: identity,
          action: 'agent.registration_declined',
          resourceType: 'agent',
          resourceId: params.agent_id.toLowerCase(),
          details: { generator_id: params.id },
        });
      }
      return noContent();
    },
  }),
];
