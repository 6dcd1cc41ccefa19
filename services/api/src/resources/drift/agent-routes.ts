import { driftReportBatchSchema } from '@brokkr/contracts';
import { requireSelf } from '../../domain/agent-access.ts';
import { errorKind } from '../../errors/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { storeReports } from './report.ts';
import { driftReportAnswerSchema } from './schemas.ts';
import { stacksServedTo } from './sql/queries.ts';

const stackNotServed = errorKind(
  422,
  'drift_stack_not_served',
  'The batch names a stack this agent is not served; nothing in it was stored',
);

/**
 * What an agent found (not a Brokkr endpoint; Brokkr's agent never calls it): the agent itself
 * only, and only about stacks it is served, like its events and health (docs/security.md).
 */
export const driftAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/agents/:id/drift',
    summary: 'Report drift found in the agent’s cluster (the agent itself), in batches; a batch sent again changes nothing',
    description:
      'Each report names its episode (`id`); `open` opens or refreshes the object’s record, `corrected` and `resolved` close it. ' +
      'With `sweep`, open records of those stacks not reported since `started_at` are resolved.',
    tags: ['drift'],
    access: 'any',
    params: idParams,
    body: driftReportBatchSchema,
    responses: { 200: { description: 'What the batch did', schema: driftReportAnswerSchema } },
    errors: [requireSelf, stackNotServed],
    async handler({ params, body, identity, ctx }) {
      requireSelf(identity, params.id);
      const agentId = params.id.toLowerCase();
      const served = await stacksServedTo(ctx.db.pool, agentId);
      const foreign = body.reports.filter((r) => !served.has(r.stack_id.toLowerCase()));
      // Which stacks are refused says nothing about them: the agent named them itself.
      if (foreign.length) throw stackNotServed({ stack_ids: [...new Set(foreign.map((r) => r.stack_id))] });
      const reports = body.reports.map((r) => ({ ...r, stack_id: r.stack_id.toLowerCase() }));
      const counts = await ctx.transact((tx) => storeReports(tx, agentId, { reports, sweep: body.sweep }));
      return json(200, counts);
    },
  }),
];
