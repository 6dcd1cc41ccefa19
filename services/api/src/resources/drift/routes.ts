import { driftAcceptSchema, driftGroupsSchema, driftPageSchema, driftRecordSchema, type DriftIgnoreRule } from '@brokkr/contracts';
import { errorKind } from '../../errors/api-error.ts';
import { agentsForStack } from '../../domain/agents-for-stacks.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { defineRoute, json, type AnyRoute, type Reply } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import type { ApiContext } from '../../context.ts';
import { actorOf, driftNotOpen, fetchOwnedDrift, readerScope } from './access.ts';
import { driftAcceptAnswerSchema, fleetDriftQuery, fleetGroupQuery, stackDriftQuery, stackGroupQuery } from './schemas.ts';
import { cursorAfter, driftJson, filterOf, pageKeyOf } from './serialize.ts';
import { acceptAsOverride, acceptAsOverrideErrors } from './accept-override.ts';
import { appendIgnoreRule, markAccepted } from './sql/accept-drift.ts';
import type { DriftRow } from './sql/drift-row.ts';
import { agentsTotal, groupDrift, listDrift, type DriftFilter } from './sql/queries.ts';

const tags = ['drift'];
const invalidCursor = errorKind(400, 'invalid_cursor', 'The cursor is not one this api gave out');
const driftPolicyFull = errorKind(409, 'drift_policy_full', "The stack's drift policy holds the most ignore rules it may");

/** One page of records: the items, the cursor of the next page, and a `Link` to it while more follow. */
async function page(ctx: ApiContext, filter: DriftFilter, q: { limit: number; cursor?: string | undefined }, path: string): Promise<Reply> {
  const after = q.cursor === undefined ? undefined : pageKeyOf(q.cursor);
  if (q.cursor !== undefined && !after) throw invalidCursor();
  const rows = await listDrift(ctx.db.pool, filter, after, q.limit + 1);
  const items = rows.slice(0, q.limit);
  const next = rows.length > q.limit ? cursorAfter(items[items.length - 1]!) : null;
  const headers: Record<string, string> = next ? { Link: `<${path}?limit=${q.limit}&cursor=${next}>; rel="next"` } : {};
  return { status: 200, body: { items: items.map(driftJson), next_cursor: next }, headers };
}

async function groups(ctx: ApiContext, filter: DriftFilter, by: Parameters<typeof groupDrift>[2], limit: number): Promise<Reply> {
  const [grouped, total] = await Promise.all([groupDrift(ctx.db, filter, by, limit), agentsTotal(ctx.db.pool, filter)]);
  return json(200, { by, records: grouped.records, agents: grouped.agents, agents_total: total, groups: grouped.groups });
}

/** The rule an acceptance adds: this object, at the record's paths (or whole, when it was deleted or scope says so). */
function acceptedRule(r: DriftRow, scope: 'fields' | 'object', note: string | undefined): DriftIgnoreRule {
  const slash = r.api_version.indexOf('/');
  const target = {
    group: slash < 0 ? '' : r.api_version.slice(0, slash),
    kind: r.kind,
    ...(r.namespace ? { namespace: r.namespace } : {}),
    name: r.name,
  };
  const whole = scope === 'object' || r.missing || r.paths.length === 0;
  return { target, ...(whole ? {} : { paths: [...new Set(r.paths)] }), ...(note ? { note } : {}), accepted_from: r.id };
}

export const driftRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/drift',
    summary: 'Drift records across the fleet, newest first: every stack (admin) or your own stacks (generator)',
    description: 'Uncapped: page with `limit` and the `next_cursor` of the previous page until it is null. Filters combine (AND).',
    tags,
    access: 'any',
    query: fleetDriftQuery,
    responses: { 200: { description: 'One page of records', schema: driftPageSchema } },
    errors: [readerScope, invalidCursor],
    async handler({ query, identity, ctx }) {
      const filter = { ...readerScope(identity), ...filterOf(query), ...(query.stack_id ? { stackId: query.stack_id.toLowerCase() } : {}) };
      return page(ctx, filter, query, '/api/v1/drift');
    },
  }),

  defineRoute({
    method: 'get',
    path: '/drift/groups',
    summary: 'Drift records grouped by field, manager, agent, stack, kind or stack × agent, largest group first',
    description: 'E.g. `by=field&state=open`: each drifted JSON pointer, on how many records and agents, and by which managers.',
    tags,
    access: 'any',
    query: fleetGroupQuery,
    responses: { 200: { description: 'The groups and totals', schema: driftGroupsSchema } },
    errors: [readerScope],
    async handler({ query, identity, ctx }) {
      const filter = { ...readerScope(identity), ...filterOf(query), ...(query.stack_id ? { stackId: query.stack_id.toLowerCase() } : {}) };
      return groups(ctx, filter, query.by, query.limit);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/drift/:id',
    summary: 'One drift record',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The record', schema: driftRecordSchema } },
    errors: [fetchOwnedDrift],
    async handler({ params, identity, ctx }) {
      return json(200, driftJson(await fetchOwnedDrift(ctx.db.pool, identity, params.id)));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/drift/:id/accept',
    summary:
      'Accept an open drift: its stack ignores it (an ignore rule) or keeps its live values (an override layer); the record is closed as accepted',
    description:
      "`scope: fields` ignores the record's paths on this object, `object` the whole object; the stack's agents read the new rule at once. " +
      "`override` adds an override layer for the record's agent that sets each drifted path to its live value (not for a deleted object or a Secret); " +
      'it is rendered first, as any layer, and the agent is served the render that holds the live values.',
    tags,
    access: 'any',
    params: idParams,
    body: driftAcceptSchema,
    bodyMode: 'optional-json',
    responses: { 200: { description: 'Accepted', schema: driftAcceptAnswerSchema } },
    errors: [fetchOwnedDrift, driftNotOpen, driftPolicyFull, ...acceptAsOverrideErrors],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const scope = body?.scope ?? 'fields';
      if (scope === 'override')
        return json(200, await acceptAsOverride(ctx, identity, params.id, { clientIp, userAgent, note: body?.note }));
      const result = await ctx.transact(async (tx) => {
        const record = await fetchOwnedDrift(tx.client, identity, params.id, true);
        if (record.state !== 'open') throw driftNotOpen({ state: record.state });
        const rule = acceptedRule(record, scope, body?.note);
        const policy = await appendIgnoreRule(tx.client, record.stack_id, rule);
        if (!policy) throw driftPolicyFull();
        await markAccepted(tx.client, record.id, actorOf(identity));
        tx.notifyAgents(await agentsForStack(tx.client, record.stack_id));
        return { record_id: record.id, stack_id: record.stack_id, rules: policy.rules, rule };
      });
      await ctx.audit({
        actor: identity,
        action: 'drift.accepted',
        resourceType: 'stack',
        resourceId: result.stack_id,
        details: { record_id: result.record_id, rule: result.rule },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, { record_id: result.record_id, stack_id: result.stack_id, rules: result.rules });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/drift',
    summary: "A stack's drift records, newest first (the stack's owner or an admin)",
    description: 'Uncapped: page with `limit` and `next_cursor`.',
    tags,
    access: 'any',
    params: idParams,
    query: stackDriftQuery,
    responses: { 200: { description: 'One page of records', schema: driftPageSchema } },
    errors: [fetchOwnedStack, invalidCursor],
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      return page(ctx, { ...filterOf(query), stackId: params.id.toLowerCase() }, query, `/api/v1/stacks/${params.id}/drift`);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/drift/groups',
    summary: "A stack's drift records grouped by field, manager, agent, kind or stack × agent",
    tags,
    access: 'any',
    params: idParams,
    query: stackGroupQuery,
    responses: { 200: { description: 'The groups and totals', schema: driftGroupsSchema } },
    errors: [fetchOwnedStack],
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      return groups(ctx, { ...filterOf(query), stackId: params.id.toLowerCase() }, query.by, query.limit);
    },
  }),
];
