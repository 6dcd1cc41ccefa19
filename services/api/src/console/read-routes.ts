import { z } from 'zod';
import type { Identity } from '../auth/identity.ts';
import { deploymentObjectNotFound, generatorNotAssociated, generatorRequired } from '../errors/catalogue.ts';
import { idParams } from '../http/schemas.ts';
import { fetchOwnedRollout } from '../resources/rollouts/access.ts';
import { rolloutJson } from '../resources/rollouts/serialize.ts';
import { approvalCounts, waveCounts } from '../resources/rollouts/sql/queries.ts';
import { fetchOwnedStack } from '../domain/stack-access.ts';
import { fetchReadableTemplate } from '../resources/templates/access.ts';
import { findDeploymentObject } from '../resources/deployment-objects/sql/queries.ts';
import { agentsForStack } from '../domain/agents-for-stacks.ts';
import { countStackObjects, stackObjectsPage } from './sql/deployment-objects.ts';
import { fleetPage, fleetSummary } from './sql/fleet.ts';
import { objectAgentStates, recentObjectEvents } from './sql/object-agents.ts';
import { rolloutAgentStates, rolloutClock, stackTimeline, templateStacks } from './sql/rollouts.ts';
import { stacksPage } from './sql/stacks.ts';
import { defineConsoleRoute, type ConsoleRoute } from './console-route.ts';

/**
 * What the console reads that the v1 API has no scalable answer for (v1 lists are unpaginated
 * and carry every object's YAML): paged, aggregated views. Access follows the v1 rules of the
 * same data: admins see everything, a generator its tenants (agents registered with it) and its
 * own stacks, agents nothing.
 */

/** The tenant filter: null = everything (admin), else the generator's id. */
function tenantOf(identity: Identity): string | null {
  if (identity.admin) return null;
  if (identity.generator) return identity.generator;
  throw generatorRequired();
}

// Anything that is not a printable string without NUL is refused before it reaches Postgres.
const searchText = z
  .string()
  .max(200)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL')
  .default('');
/** How far back a stack's timeline reads the outbox (its rows are pruned after some hours anyway). */
const TIMELINE_WINDOW_MS = 7 * 24 * 3600_000;

const page = (defaultLimit: number, max: number) => ({
  limit: z.coerce.number().int().min(1).max(max).default(defaultLimit),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export const consoleReadRoutes: ConsoleRoute[] = [
  defineConsoleRoute({
    path: '/fleet',
    query: z.object({ q: searchText, ...page(100, 500) }),
    async handler({ query, identity, ctx }) {
      const filter = { generatorId: tenantOf(identity), search: query.q };
      const [agents, summary] = await Promise.all([
        fleetPage(ctx.db.pool, filter, query.limit, query.offset),
        fleetSummary(ctx.db.pool, filter),
      ]);
      return { agents, summary, total: summary.total, limit: query.limit, offset: query.offset };
    },
  }),
  defineConsoleRoute({
    path: '/stacks',
    query: z.object({ q: searchText, ...page(100, 500) }),
    async handler({ query, identity, ctx }) {
      const filter = { generatorId: tenantOf(identity), search: query.q };
      const { stacks, total } = await stacksPage(ctx.db.pool, filter, query);
      return { stacks, total, limit: query.limit, offset: query.offset };
    },
  }),
  defineConsoleRoute({
    path: '/stacks/:id/deployment-objects',
    params: idParams,
    query: z.object(page(50, 500)),
    async handler({ params, query, identity, ctx }) {
      const { id } = params;
      const { limit, offset } = query;
      const stack = await fetchOwnedStack(ctx.db.pool, identity, id);
      const [objects, total] = await Promise.all([stackObjectsPage(ctx.db.pool, id, limit, offset), countStackObjects(ctx.db.pool, id)]);
      return { stack, objects, total, limit, offset };
    },
  }),
  defineConsoleRoute({
    path: '/deployment-objects/:id/agents',
    params: idParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(2000).default(500) }),
    async handler({ params, query, identity, ctx }) {
      const { id } = params;
      const { limit } = query;
      const tenant = tenantOf(identity);
      const found = await findDeploymentObject(ctx.db.pool, id);
      if (!found) throw deploymentObjectNotFound();
      if (tenant !== null && tenant !== found.stackGeneratorId) throw generatorNotAssociated();
      const associated = await agentsForStack(ctx.db.pool, found.object.stack_id);
      const [states, events] = await Promise.all([
        objectAgentStates(ctx.db.pool, id, { associatedIds: associated, generatorId: tenant, limit }),
        recentObjectEvents(ctx.db.pool, id, tenant, 20),
      ]);
      return { deployment_object: found.object, stack_deleted: found.stackDeleted, ...states, recent_events: events };
    },
  }),
  defineConsoleRoute({
    path: '/rollouts/:id',
    params: idParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(2000).default(500) }),
    async handler({ params, query, identity, ctx }) {
      const row = await fetchOwnedRollout(ctx.db.pool, identity, params.id);
      const [counts, approvals, clock, agents, events] = await Promise.all([
        waveCounts(ctx.db.pool, [row.id]),
        approvalCounts(ctx.db.pool, [row.id]),
        rolloutClock(ctx.db.pool, row.id),
        rolloutAgentStates(ctx.db.pool, row.id, query.limit),
        stackTimeline(ctx.db.pool, { stackId: row.stack_id, rolloutId: row.id, since: row.created_at, limit: 200 }),
      ]);
      return { rollout: rolloutJson(row, counts, approvals), ...clock, agents, events };
    },
  }),
  defineConsoleRoute({
    path: '/stacks/:id/events',
    params: idParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const since = new Date(Date.now() - TIMELINE_WINDOW_MS);
      return { events: await stackTimeline(ctx.db.pool, { stackId: params.id, since, limit: query.limit }) };
    },
  }),
  defineConsoleRoute({
    path: '/templates/:id/stacks',
    params: idParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
    async handler({ params, query, identity, ctx }) {
      await fetchReadableTemplate(ctx.db.pool, identity, params.id);
      return { stacks: await templateStacks(ctx.db.pool, params.id, tenantOf(identity), query.limit) };
    },
  }),
];
