import type { SubmitDiagnosticResult } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import {
  diagnosticAlreadyClaimed,
  diagnosticNotClaimed,
  fetchDiagnosticRequest,
  invalidDiagnosticResult,
  requireAdminOrTargetAgent,
  requireTargetAgent,
} from './access.ts';
import { tooManyStreams } from '../../limits/stream-quota.ts';
import { replyPendingList } from '../../http/pending-list.ts';
import { diagnosticRequestSchema, diagnosticResultSchema, pendingDiagnosticsQuery, submitDiagnosticResultSchema } from './schemas.ts';
import { claimDiagnosticRequest } from './sql/claim-diagnostic-request.ts';
import type { DiagnosticRequestRow } from './sql/diagnostic-row.ts';
import { findDiagnosticRequest, listPendingDiagnostics } from './sql/queries.ts';
import { recordDiagnosticResult } from './sql/record-diagnostic-result.ts';

const tags = ['diagnostics'];

/**
 * Brokkr's message for a request that cannot be claimed: "request is already <status>". A request
 * still pending and unexpired was refused because its agent is not ACTIVE (inactive agents get no work).
 */
function alreadyClaimed(row: DiagnosticRequestRow | undefined) {
  if (row?.status === 'pending' && row.expires_at.getTime() > Date.now())
    return diagnosticAlreadyClaimed.with('Diagnostic request is not claimable while its agent is not ACTIVE', { status: row.status });
  const status = row?.status === 'pending' ? 'expired' : (row?.status ?? 'gone');
  return diagnosticAlreadyClaimed.with(`Diagnostic request is already ${status}`, { status });
}

function requireNonEmpty(body: SubmitDiagnosticResult): void {
  for (const field of ['pod_statuses', 'events'] as const) {
    if (body[field].trim() === '') throw invalidDiagnosticResult.with(`${field} must not be empty`, { field });
  }
}

/** The agent side of diagnostics: the pending list (with a long-poll), claim, result. */
export const diagnosticAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/diagnostics/pending',
    summary: "The agent's pending, unexpired diagnostic requests, oldest first",
    description:
      'Long-poll extension: with `wait=<seconds>`, an empty answer is held until a request for the agent is created, or the wait ends.',
    tags,
    access: 'any',
    params: idParams,
    query: pendingDiagnosticsQuery,
    responses: { 200: { description: 'Diagnostic requests', schema: diagnosticRequestSchema.array() } },
    errors: [requireAdminOrSelf, tooManyStreams],
    async handler({ params, query, identity, ctx, res }) {
      requireAdminOrSelf(identity, params.id);
      const agentId = params.id.toLowerCase();
      return replyPendingList(ctx, res, { agentId, wait: query.wait, identity }, () => listPendingDiagnostics(ctx.db.pool, agentId));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/diagnostics/:id/claim',
    summary: 'Claim a pending diagnostic request (atomic: one claimer wins)',
    description: 'No body. Of concurrent claims exactly one gets 200; the others get 409 `diagnostic_already_claimed`.',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The request (claimed)', schema: diagnosticRequestSchema } },
    errors: [fetchDiagnosticRequest, requireAdminOrTargetAgent, diagnosticAlreadyClaimed],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const request = await fetchDiagnosticRequest(ctx.db.pool, params.id);
      requireAdminOrTargetAgent(identity, request);
      const claimed = await claimDiagnosticRequest(ctx.db.pool, request.id);
      if (!claimed) throw alreadyClaimed(await findDiagnosticRequest(ctx.db.pool, request.id));
      await ctx.audit({
        actor: identity,
        action: 'diagnostic.claimed',
        resourceType: 'diagnostic_request',
        resourceId: claimed.id,
        details: { agent_id: claimed.agent_id, deployment_object_id: claimed.deployment_object_id },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, claimed);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/diagnostics/:id/result',
    summary: 'Submit the result of a claimed diagnostic request (the target agent only)',
    description:
      'The request becomes `completed`. A collection error is a normal result (`events` = `[{"error": "..."}]`). ' +
      'A second result for the same request gets 409 `diagnostic_not_claimed` and stores nothing.',
    tags,
    access: 'any',
    params: idParams,
    body: submitDiagnosticResultSchema,
    responses: { 201: { description: 'The stored result', schema: diagnosticResultSchema } },
    errors: [fetchDiagnosticRequest, requireTargetAgent, invalidDiagnosticResult, diagnosticNotClaimed],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const request = await fetchDiagnosticRequest(ctx.db.pool, params.id);
      requireTargetAgent(identity, request);
      requireNonEmpty(body);
      const result = await recordDiagnosticResult(ctx.db.pool, request.id, {
        podStatuses: body.pod_statuses,
        events: body.events,
        logTails: body.log_tails ?? null,
        collectedAt: body.collected_at,
      });
      if (!result) {
        const now = await findDiagnosticRequest(ctx.db.pool, request.id);
        throw diagnosticNotClaimed.with(`Diagnostic request is ${now?.status ?? 'gone'}, not claimed`, { status: now?.status ?? null });
      }
      await ctx.audit({
        actor: identity,
        action: 'diagnostic.completed',
        resourceType: 'diagnostic_request',
        resourceId: request.id,
        details: { agent_id: request.agent_id, deployment_object_id: request.deployment_object_id },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, result);
    },
  }),
];
