import { heartbeatSchema, readClusterFacts } from '@brokkr/contracts';
import type { RawBody } from '../../http/body.ts';
import { defineRoute, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireSelf } from '../../domain/agent-access.ts';
import { acceptHeartbeat, type HeartbeatReport } from './heartbeat.ts';

/** Brokkr ignores a missing or unparsable heartbeat body instead of rejecting the heartbeat. */
function heartbeatReport(raw: RawBody | undefined): HeartbeatReport {
  if (!raw || raw.bytes.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.bytes.toString('utf8'));
  } catch {
    return {};
  }
  const facts = typeof parsed === 'object' && parsed !== null && 'facts' in parsed ? readClusterFacts(parsed.facts) : undefined;
  const body = heartbeatSchema.omit({ facts: true }).safeParse(parsed);
  if (!body.success) return { facts };
  const { k8s_reachable: reachable, k8s_api_latency_ms: latencyMs } = body.data;
  return { k8s: typeof reachable === 'boolean' ? { reachable, latencyMs: latencyMs ?? null } : undefined, facts };
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
      await acceptHeartbeat(ctx, params.id, heartbeatReport(raw));
      return noContent();
    },
  }),
];
