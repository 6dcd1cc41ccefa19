import { z } from 'zod';
import { deploymentObjectSchema } from './agent-api.ts';

/**
 * Our extensions of the agent channel (`/internal/ws/agent`). An agent asks for them in its
 * upgrade request (`Brokkr-Agent-Features`, comma-separated); Brokkr's agent sends no such header
 * and keeps Brokkr's frames.
 */
export const AGENT_FEATURES_HEADER = 'brokkr-agent-features';

/** The agent can take `target_state_patch` frames instead of fetching after a `stack_changed` hint. */
export const TARGET_STATE_PATCH_FEATURE = 'target-state-patch';

/**
 * `target_state_patch`: the agent's full target state (`mode=full`) moved from the answer whose
 * ETag is `base_etag` to the one whose ETag is `etag`, by putting each of `objects` in place of
 * the object of its stack; the result is ordered newest first (`sequence_id` descending), as a
 * target-state answer is. An agent that does not hold exactly `base_etag` fetches instead.
 */
export const targetStatePatchSchema = z.object({
  base_etag: z.string(),
  etag: z.string(),
  objects: deploymentObjectSchema.array().min(1),
});
export type TargetStatePatch = z.output<typeof targetStatePatchSchema>;

/** The agent's features as a hub reads them from the upgrade request's header. */
export function agentFeatures(header: string | string[] | undefined): Set<string> {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return new Set(
    text
      .split(',')
      .map((f) => f.trim().toLowerCase())
      .filter(Boolean),
  );
}
