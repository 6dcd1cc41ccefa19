import { DIAGNOSTIC_RETENTION_MINUTES, type NewDiagnosticRequest } from '@brokkr/contracts';
import { agentNotFound, deploymentObjectNotFound } from '../../errors/catalogue.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchDiagnosticRequest, invalidDiagnosticRequest, requireAdminOrTargetAgent } from './access.ts';
import { diagnosticRequestSchema, diagnosticWithResultSchema, newDiagnosticRequestSchema } from './schemas.ts';
import { insertDiagnosticRequest } from './sql/create-diagnostic-request.ts';
import { agentExists, deploymentObjectExists, findDiagnosticResult } from './sql/queries.ts';

const tags = ['diagnostics'];
/** The requested_by column's width. */
const REQUESTED_BY_MAX = 255;

/** The checks Brokkr answers with 400 `invalid_diagnostic_request`, plus the column width (Brokkr: a 500). */
function retentionOf(body: NewDiagnosticRequest): number {
  const { min, max } = DIAGNOSTIC_RETENTION_MINUTES;
  const retention = body.retention_minutes ?? DIAGNOSTIC_RETENTION_MINUTES.default;
  if (retention < min || retention > max) {
    throw invalidDiagnosticRequest.with(`retention_minutes must be between ${min} and ${max}`, { field: 'retention_minutes' });
  }
  if ((body.requested_by?.length ?? 0) > REQUESTED_BY_MAX) {
    throw invalidDiagnosticRequest.with(`requested_by must be at most ${REQUESTED_BY_MAX} characters`, { field: 'requested_by' });
  }
  return retention;
}

/** The admin side of diagnostics: ask an agent for diagnostics, read the outcome. */
export const diagnosticRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/deployment-objects/:id/diagnostics',
    summary: "Ask an agent to collect pod statuses, events and log tails for a deployment object's resources",
    description:
      'Creates a `pending` request that expires `retention_minutes` (1 … 1440, default 60) after creation, and wakes the ' +
      "agent's long-poll (`brokkr.notify.agent.<id>`). Read the outcome with `GET /diagnostics/{id}`.",
    tags,
    access: 'admin',
    params: idParams,
    body: newDiagnosticRequestSchema,
    responses: { 201: { description: 'The request (pending)', schema: diagnosticRequestSchema } },
    // A hard-deleted agent between the check and the insert breaks the reference.
    errors: [invalidDiagnosticRequest, deploymentObjectNotFound, agentNotFound, foreignKeyViolation],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const retentionMinutes = retentionOf(body);
      const agentId = body.agent_id.toLowerCase();
      if (!(await deploymentObjectExists(ctx.db.pool, params.id))) throw deploymentObjectNotFound();
      if (!(await agentExists(ctx.db.pool, agentId))) throw agentNotFound();
      const request = await ctx.transact(async (tx) => {
        const row = await insertDiagnosticRequest(tx.client, {
          agentId,
          deploymentObjectId: params.id,
          requestedBy: body.requested_by ?? null,
          retentionMinutes,
        });
        tx.notifyAgents([agentId]);
        return row;
      });
      await ctx.audit({
        actor: identity,
        action: 'diagnostic.requested',
        resourceType: 'diagnostic_request',
        resourceId: request.id,
        details: { agent_id: agentId, deployment_object_id: request.deployment_object_id, retention_minutes: retentionMinutes },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, request);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/diagnostics/:id',
    summary: 'A diagnostic request and its result (null until the agent has posted one)',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The request and its result', schema: diagnosticWithResultSchema } },
    errors: [fetchDiagnosticRequest, requireAdminOrTargetAgent],
    async handler({ params, identity, ctx }) {
      const request = await fetchDiagnosticRequest(ctx.db.pool, params.id);
      requireAdminOrTargetAgent(identity, request);
      const result = await findDiagnosticResult(ctx.db.pool, request.id);
      return json(200, { request, result: result ?? null });
    },
  }),
];
