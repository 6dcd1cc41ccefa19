import { telemetryFrameSchema, type TelemetryFrame } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';

export type TelemetryFrameType = 'k8s_event' | 'pod_log_line' | 'log_gap';

/** Longer strings are cut here (a line, an event message): one frame may be 16 MiB on Brokkr's wire. */
export const MAX_STRING_LENGTH = 64 * 1024;

/** Postgres text refuses NUL; an over-long value is cut. Everything else is stored as sent. */
function clean(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD').slice(0, MAX_STRING_LENGTH);
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
  return value;
}

/** Timestamps Postgres and JavaScript agree on (a valid RFC 3339 string can still be year 0000 or 9999-12-31T24:00). */
const sane = (ts: string) => {
  const ms = Date.parse(ts);
  return Number.isFinite(ms) && ms > Date.UTC(1970, 0, 1) && ms < Date.UTC(9000, 0, 1);
};

/** Routes a frame the agent may send: gaps to the live subscribers, events and (rate-limited) lines to storage. */
function accept(ctx: ApiContext, state: ApiContext['feeds'], frame: TelemetryFrame): void {
  const dropped = (why: string) => ctx.logger.debug({ agentId: frame.body.agent_id, type: frame.type }, `telemetry frame dropped: ${why}`);
  if (frame.type === 'log_gap') return state.stacks.publish(frame);
  if (!sane(frame.type === 'k8s_event' ? frame.body.observed_at : frame.body.ts)) return dropped('timestamp out of range');
  if (frame.type === 'pod_log_line') {
    const { agent_id, stack_id, namespace, pod, container } = frame.body;
    if (!state.limiter.admit(JSON.stringify([agent_id, stack_id, namespace, pod, container]))) return;
  }
  if (!state.writer.add(frame)) dropped('too many waiting for the database');
}

/**
 * The agent channel calls this for each telemetry frame of an authenticated agent connection
 *. A frame is dropped (logged at debug, never thrown) when it does not
 * decode, when `agent_id` is not the connection's agent (for `log_gap` too, unlike Brokkr), or when
 * the agent is not associated with `stack_id` (Brokkr accepts any agent for any stack). Log lines
 * beyond 100 per second per container are dropped and reported to live subscribers as one
 * `log_gap` with the real count. Events and lines are stored (6 hours) and then published to the
 * stack's live subscribers on every replica; gaps are published only.
 */
export async function ingestTelemetryFrame(ctx: ApiContext, agentId: string, type: TelemetryFrameType, body: unknown): Promise<void> {
  try {
    const parsed = telemetryFrameSchema.safeParse({ type, body: clean(body) });
    if (!parsed.success) {
      ctx.logger.debug({ agentId, type, issues: parsed.error.issues.slice(0, 3) }, 'telemetry frame dropped: does not decode');
      return;
    }
    const frame: TelemetryFrame = parsed.data;
    if (frame.body.agent_id !== agentId) {
      ctx.logger.debug({ agentId, type, claimed: frame.body.agent_id }, 'telemetry frame dropped: agent_id is not the connection');
      return;
    }
    const state = ctx.feeds;
    if (!(await state.access.allows(agentId, frame.body.stack_id))) {
      ctx.logger.debug({ agentId, type, stackId: frame.body.stack_id }, 'telemetry frame dropped: the agent does not target the stack');
      return;
    }
    accept(ctx, state, frame);
  } catch (err) {
    ctx.logger.warn({ err, agentId, type }, 'telemetry frame dropped');
  }
}
