import { heartbeatSchema } from '@brokkr/contracts';
import type { RawBody } from '../../http/body.ts';
import { defineRoute, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireSelf } from '../../domain/agent-access.ts';
import { acceptHeartbeat, type K8sReport } from './heartbeat.ts';

/** Brokkr ignores a missing or unparsable heartbeat body instead of rejecting the heartbeat. */
function k8sReport(raw: RawBody | undefined): K8sReport | undefined {
  if (!raw || raw.bytes.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const body = heartbeatSchema.safeParse(parsed);
  if (!body.success || typeof body.data.k8s_reachable !== 'boolean') return undefined;
  return { reachable: body.data.k8s_reachable, latencyMs: body.data.k8s_api_latency_ms ?? null };
}

export const agentHeartbeatRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/agents/:id/heartbeat',
    summary: 'Record a heartbeat (the agent itself only)',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    body: heartbeatSchema,
    bodyMode: 'raw',
    responses: { 204: { description: 'Recorded' } },
    errors: [requireSelf],
    async handler({ params, raw, identity, ctx }) {
      requireSelf(identity, params.id);
      await acceptHeartbeat(ctx, params.id, k8sReport(raw));
      return noContent();
    },
  }),
];
