import type { PreviewVerdict } from './sql/record-preview-result.ts';
import type { SubmitPreviewResult } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { invalidPreviewResult, previewAlreadyReported, requireTargetedAgent } from './access.ts';
import { tooManyStreams } from '../../limits/stream-quota.ts';
import { replyPendingList } from '../../http/pending-list.ts';
import { listPendingPreviews } from './sql/queries.ts';
import { pendingPreviewSchema, pendingPreviewsQuery, submitPreviewResultSchema } from './schemas.ts';
import { recordPreviewResult } from './sql/record-preview-result.ts';
import { previewCounts } from './view.ts';
import { z } from 'zod';

const tags = ['previews'];

/** The hub decides the verdict from the objects, so it always agrees with them. */
function verdictOf(result: SubmitPreviewResult): PreviewVerdict {
  if (result.error || result.objects.some((o) => o.error)) return 'error';
  return result.objects.some((o) => o.action !== 'unchanged') ? 'changes' : 'clean';
}

function containsNul(value: unknown): boolean {
  let found = false;
  JSON.stringify(value, (_key, v: unknown) => ((found ||= typeof v === 'string' && v.includes('\0')), v));
  return found;
}

const recordedSchema = z.object({ status: z.enum(['clean', 'changes', 'error']) }).meta({ id: 'PreviewResultRecorded' });

/** The agent side of previews: the pending list (with a long-poll) and the one result per agent. */
export const previewAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/previews/pending',
    summary: 'Previews the agent has not reported on yet (unexpired), oldest first, with their YAML',
    description: 'With `wait=<seconds>`, an empty answer is held until a preview for the agent is created, or the wait ends.',
    tags,
    access: 'any',
    params: idParams,
    query: pendingPreviewsQuery,
    responses: { 200: { description: 'Pending previews', schema: pendingPreviewSchema.array() } },
    errors: [requireAdminOrSelf, tooManyStreams],
    async handler({ params, query, identity, ctx, res }) {
      requireAdminOrSelf(identity, params.id);
      const agentId = params.id.toLowerCase();
      return replyPendingList(ctx, res, { agentId, wait: query.wait, identity }, () => listPendingPreviews(ctx.db.pool, agentId));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/previews/:id/results',
    summary: "Report this agent's dry-run result for a preview (once)",
    description:
      'Only an agent the preview targets, for itself. The verdict (`clean`, `changes`, `error`) is derived from the objects. ' +
      'A second report, or one after the preview expired, gets 409 `preview_already_reported` and changes nothing.',
    tags,
    access: 'any',
    params: idParams,
    body: submitPreviewResultSchema,
    responses: { 201: { description: 'Stored; the verdict', schema: recordedSchema } },
    errors: [requireTargetedAgent, invalidPreviewResult, previewAlreadyReported],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const agentId = await requireTargetedAgent(ctx.db.pool, identity, params.id);
      const status = verdictOf(body);
      const result = { objects: body.objects, error: body.error ?? null };
      // PostgreSQL's jsonb cannot hold U+0000; refuse it rather than fail the insert.
      if (containsNul(result)) throw invalidPreviewResult.with('A preview result must not contain NUL characters');
      await ctx.transact(async (tx) => {
        // The preview row is locked: of two last reports arriving together, exactly one sees no agent left pending.
        const remaining = await recordPreviewResult(tx.client, { previewId: params.id, agentId, verdict: status, result });
        if (!remaining) throw previewAlreadyReported();
        if (remaining.pending === 0)
          tx.emit('preview.completed', { preview_id: params.id, stack_id: remaining.stackId, counts: previewCounts(remaining.statuses) });
      });
      await ctx.audit({
        actor: identity,
        action: 'preview.reported',
        resourceType: 'agent',
        resourceId: agentId,
        details: { preview_id: params.id, status, objects: body.objects.length },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, { status });
    },
  }),
];
