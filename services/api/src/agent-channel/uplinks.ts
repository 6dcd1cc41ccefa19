import type { z } from 'zod';
import { CONTROL_UPLINK_BODIES, healthUpdateSchema, readClusterFacts, type ControlUplinkType } from '@brokkr/contracts';
import type { ApiContext } from '../context.ts';
import { reportAgentEvent } from '../resources/agent-events/report.ts';
import { acceptHeartbeat } from '../resources/agents/heartbeat.ts';
import { reportHealth } from '../resources/health/report.ts';
import { repeatedSuccess } from '../compat/brokkr-agent/repeat-event.ts';

/** Frame bodies that do not decode are dropped with a warning, like Brokkr's. */
class FrameRejected extends Error {}

function parse<T>(schema: z.ZodType<T>, body: unknown, type: string): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new FrameRejected(`${type} frame dropped: ${parsed.error.issues[0]?.message ?? 'invalid body'}`);
  return parsed.data;
}

function sameAgent(connectionAgent: string, bodyAgent: string, type: string): void {
  if (bodyAgent.toLowerCase() !== connectionAgent) throw new FrameRejected(`${type} frame for another agent dropped`);
}

/** The `summary` of a WS health frame is a JSON string; REST takes the object. Unparsable → no summary. */
function summaryObject(summary: string | null | undefined): unknown {
  if (!summary) return null;
  try {
    return JSON.parse(summary);
  } catch {
    return null;
  }
}

/**
 * Control uplinks, each with exactly the effects of its REST twin (the same functions): heartbeat →
 * `acceptHeartbeat`, agent_event → `reportAgentEvent` (row, `deployment.applied`/`failed` webhook
 * event, wake-up), agent_health → `reportHealth` (same validation). The agent is the connection's.
 */
export async function handleControlUplink(
  ctx: ApiContext,
  agent: { id: string; brokkrRustAgent: boolean },
  type: ControlUplinkType,
  body: unknown,
): Promise<void> {
  const agentId = agent.id;
  try {
    if (type === 'heartbeat') {
      const hb = parse(CONTROL_UPLINK_BODIES.heartbeat, body, type);
      // Like REST: the Kubernetes report is recorded only when the agent says whether it reached the API.
      const k8s =
        typeof hb.k8s_reachable === 'boolean' ? { reachable: hb.k8s_reachable, latencyMs: hb.k8s_api_latency_ms ?? null } : undefined;
      await acceptHeartbeat(ctx, agentId, { k8s, facts: readClusterFacts(hb.facts) });
    } else if (type === 'agent_event') {
      const ev = parse(CONTROL_UPLINK_BODIES.agent_event, body, type);
      sameAgent(agentId, ev.agent_id, type);
      // Brokkr's own agent re-reports SUCCESS on every poll of its full target state (compat/brokkr-agent/).
      if (agent.brokkrRustAgent && (await repeatedSuccess(ctx.db.pool, agentId, ev.deployment_object_id, ev.status))) return;
      await reportAgentEvent(ctx, agentId, {
        deploymentObjectId: ev.deployment_object_id,
        eventType: ev.event_type,
        status: ev.status,
        message: ev.message ?? null,
      });
    } else {
      const h = parse(CONTROL_UPLINK_BODIES.agent_health, body, type);
      sameAgent(agentId, h.agent_id, type);
      const update = parse(
        healthUpdateSchema,
        {
          deployment_objects: [
            { id: h.deployment_object_id, status: h.status, summary: summaryObject(h.summary), checked_at: h.checked_at },
          ],
        },
        type,
      );
      await reportHealth(ctx, agentId, update);
    }
  } catch (err) {
    if (err instanceof FrameRejected) return void ctx.logger.warn({ agentId, type }, err.message);
    throw err;
  }
}
