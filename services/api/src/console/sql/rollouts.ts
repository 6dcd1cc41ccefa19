import type { Queryable } from '@brokkr/db';

/** One agent of a rollout: its wave and what it last reported for the rollout's object. */
export interface RolloutAgentState {
  agent_id: string;
  name: string;
  cluster_name: string;
  wave: number;
  last_event: { status: string; message: string | null; created_at: Date } | null;
  health: string | null;
}

/** When the released wave started and since when it has been applied and healthy (its soak); null when none. */
export interface RolloutClock {
  wave_started_at: Date | null;
  wave_healthy_since: Date | null;
}

export async function rolloutClock(db: Queryable, rolloutId: string): Promise<RolloutClock> {
  const { rows } = await db.query<RolloutClock>('SELECT wave_started_at, wave_healthy_since FROM rollouts WHERE id = $1', [rolloutId]);
  return rows[0] ?? { wave_started_at: null, wave_healthy_since: null };
}

/**
 * Every agent assigned to the rollout, by wave then name, with the latest event it posted for the
 * rollout's object and its health report of it (what the gate reads).
 */
export async function rolloutAgentStates(db: Queryable, rolloutId: string, limit: number): Promise<RolloutAgentState[]> {
  const { rows } = await db.query<RolloutAgentState>(
    `SELECT ra.agent_id, a.name, a.cluster_name, ra.wave,
            (SELECT jsonb_build_object('status', e.status, 'message', e.message, 'created_at', e.created_at)
               FROM agent_events e
              WHERE e.agent_id = ra.agent_id AND e.deployment_object_id = r.deployment_object_id AND e.deleted_at IS NULL
              ORDER BY e.created_at DESC LIMIT 1) AS last_event,
            (SELECT h.status FROM deployment_health h
              WHERE h.agent_id = ra.agent_id AND h.deployment_object_id = r.deployment_object_id) AS health
       FROM rollout_agents ra
       JOIN rollouts r ON r.id = ra.rollout_id
       JOIN agents a ON a.id = ra.agent_id
      WHERE ra.rollout_id = $1
      ORDER BY ra.wave, a.name
      LIMIT $2`,
    [rolloutId, limit],
  );
  return rows;
}

export interface TimelineEvent {
  id: string;
  event_type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * A stack's recent domain events (rollout steps, `stack.expiring`, deployments…) as the outbox
 * still holds them: rows are pruned some hours after they are published (maintenance's retention
 * task), so this is the recent timeline, not history (the audit log keeps operator actions).
 * `since` bounds the scan through the published_at index; unpublished rows are always included.
 */
export async function stackTimeline(
  db: Queryable,
  filter: { stackId: string; rolloutId?: string; since: Date; limit: number },
): Promise<TimelineEvent[]> {
  const { rows } = await db.query<TimelineEvent>(
    `SELECT payload->>'id' AS id, event_type, payload->>'timestamp' AS timestamp, payload->'data' AS data
       FROM outbox
      WHERE (published_at >= $2 OR published_at IS NULL)
        AND payload->'data'->>'stack_id' = $1::text
        AND ($3::text IS NULL OR payload->'data'->>'rollout_id' = $3::text)
      ORDER BY created_at DESC, id
      LIMIT $4`,
    [filter.stackId, filter.since, filter.rolloutId ?? null, filter.limit],
  );
  return rows;
}

/** A stack a template (any version of the same owner and name) rendered a deployment object into. */
export interface RenderedStack {
  stack_id: string;
  stack_name: string;
  template_version: number;
  deployment_object_id: string;
  sequence_id: number;
  rendered_at: Date;
}

/**
 * The stacks rendered from a template's versions, newest render per stack first; `generatorId`
 * null = every stack (admin), else only that generator's stacks.
 */
export async function templateStacks(
  db: Queryable,
  templateId: string,
  generatorId: string | null,
  limit: number,
): Promise<RenderedStack[]> {
  const { rows } = await db.query<RenderedStack>(
    `SELECT DISTINCT ON (s.id) s.id AS stack_id, s.name AS stack_name, rdo.template_version,
            d.id AS deployment_object_id, d.sequence_id, rdo.created_at AS rendered_at
       FROM stack_templates t
       JOIN stack_templates v ON v.name = t.name AND v.generator_id IS NOT DISTINCT FROM t.generator_id
       JOIN rendered_deployment_objects rdo ON rdo.template_id = v.id
       JOIN deployment_objects d ON d.id = rdo.deployment_object_id
       JOIN stacks s ON s.id = d.stack_id AND s.deleted_at IS NULL
      WHERE t.id = $1 AND ($2::uuid IS NULL OR s.generator_id = $2)
      ORDER BY s.id, rdo.created_at DESC
      LIMIT $3`,
    [templateId, generatorId, limit],
  );
  return rows;
}
