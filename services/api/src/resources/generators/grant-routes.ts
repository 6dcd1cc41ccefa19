import { agentGrantsSchema, grantInputSchema } from '@brokkr/contracts';
import { z } from 'zod';
import { errorKind } from '../../errors/api-error.ts';
import { agentNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { queryAgentGrants } from '../../domain/grants.ts';
import { registrationView } from './grants.ts';
import { registrationRequestParams, registrationSchema } from './schemas.ts';
import { liveAgentExists } from './sql/queries.ts';
import { updateRegistrationGrant } from './sql/register-agent.ts';

/**
 * Grants (docs/security.md, "Tenants confined in shared clusters"): what each generator may place
 * on an agent's cluster. The cluster's side sets them — the agent when it asks to register, an
 * admin here — never the generator, which sees its own in GET /generators/{id}/registered-agents.
 * Every change wakes the agent: its target state's `Brokkr-Grants` digest changes with it.
 */

const tags = ['generators'];
const registrationNotFound = errorKind(404, 'registration_not_found', 'The agent is not registered with this generator');

const grantUpdateSchema = z
  .object({ grant: grantInputSchema.nullable().meta({ description: 'The new grant; null: the defaults' }) })
  .meta({ id: 'GrantUpdate' });

export const grantRoutes: AnyRoute[] = [
  defineRoute({
    method: 'put',
    path: '/generators/:id/registered-agents/:agent_id/grant',
    summary: "Change what a generator may place on an agent's cluster (admin)",
    description:
      'Replaces the grant of the registration; unset fields take the defaults. A generator never changes its own grant; ' +
      'an agent asks for one when it registers. Objects the new grant no longer allows are refused by the agent from its next pass.',
    tags,
    access: 'admin',
    params: registrationRequestParams,
    body: grantUpdateSchema,
    responses: { 200: { description: 'The registration with its new grant', schema: registrationSchema } },
    errors: [registrationNotFound],
    async handler({ params, body, identity, ctx }) {
      const row = await ctx.transact(async (tx) => {
        const updated = await updateRegistrationGrant(tx.client, params.agent_id, params.id, body.grant);
        if (!updated) throw registrationNotFound();
        tx.notifyAgents([updated.agent_id]);
        return updated;
      });
      await ctx.audit({
        actor: identity,
        action: 'agent.grant_changed',
        resourceType: 'agent',
        resourceId: row.agent_id,
        details: { generator_id: row.generator_id, grant: body.grant },
      });
      return json(200, registrationView(row));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/grants',
    summary: 'What each generator may place on the agent’s cluster, and the generator of each stack it is served',
    description:
      'The agent reads this whenever the `Brokkr-Grants` header of its target state changes, and enforces it before every apply, ' +
      'preview and prune. `whole_cluster_in_effect`: the grant reaches the whole cluster right now (only while its generator is the agent’s only tenant).',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The grants', schema: agentGrantsSchema } },
    errors: [requireAdminOrSelf, agentNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      if (!(await liveAgentExists(ctx.db.pool, params.id))) throw agentNotFound();
      return json(200, await queryAgentGrants(ctx.db.pool, params.id));
    },
  }),
];
