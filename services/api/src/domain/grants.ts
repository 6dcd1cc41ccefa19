import { prepared, type Queryable } from '@brokkr/db';
import { resolveDriftPolicy, type AgentGrants, type DriftPolicy, type GrantInput, type ScheduledWindow } from '@brokkr/contracts';
import { resolveGrant, wholeClusterInEffect } from '@brokkr/grants';

export { grantsDigest } from '@brokkr/grants';
import { associationPairs } from './association.ts';

interface GrantsRow {
  generators: { generator_id: string; generator_name: string; is_system: boolean; grant: GrantInput | null }[];
  stacks: { stack_id: string; generator_id: string; drift: DriftPolicy | null }[];
  labels: string[];
  windows: ScheduledWindow[];
}

/**
 * An agent's grants in one round trip: each live generator it is registered with (the stored
 * grant, NULL for the defaults) and the generator of every stack associated with it (the
 * association rule of association.ts, deleted stacks included: their markers are served too),
 * with the stack's drift policy when it has one and the agent's labels (a policy's cluster-group
 * overrides match on them). The policy travels here so that changing it changes the grants
 * digest, and with it the target state's ETag: the agent reads it before it next acts. The
 * maintenance windows that select the agent (it carries every label a window names) travel here
 * for the same reason, each with the latest expiry of its bypasses; a bypass stays listed for a
 * day after it expired (the agent compares with its clock), so its expiry alone moves no digest
 * until then and the answers kept in memory stay in step with the grants an agent fetches.
 */
const agentGrantsStatement = prepared(
  'brokkr_agent_grants',
  `WITH agent AS (
     SELECT id FROM agents WHERE id = $1 AND deleted_at IS NULL
   )
   SELECT
     (SELECT coalesce(jsonb_agg(jsonb_build_object('generator_id', g.id, 'generator_name', g.name, 'is_system', g.is_system,
                                                   'grant', r.registration_grant) ORDER BY g.id), '[]')
        FROM agent JOIN agent_generator_registrations r ON r.agent_id = agent.id
        JOIN generators g ON g.id = r.generator_id AND g.deleted_at IS NULL) AS generators,
     (SELECT coalesce(jsonb_agg(jsonb_build_object('stack_id', s.id, 'generator_id', s.generator_id, 'drift', dp.policy) ORDER BY s.id), '[]')
        FROM (SELECT DISTINCT p.stack_id FROM (${associationPairs('agent')}) p) p
        JOIN stacks s ON s.id = p.stack_id
        LEFT JOIN stack_drift_policies dp ON dp.stack_id = s.id) AS stacks,
     (SELECT coalesce(array_agg(l.label ORDER BY l.label), '{}') FROM agent JOIN agent_labels l ON l.agent_id = agent.id) AS labels,
     (SELECT coalesce(jsonb_agg(jsonb_build_object('id', w.id, 'name', w.name, 'type', w.type, 'rrule', w.rrule,
                                                   'duration_seconds', w.duration_seconds, 'stack_ids', w.stack_ids,
                                                   'generator_ids', w.generator_ids, 'gates', w.gates,
                                                   'bypassed_until', (SELECT to_char(max(b.expires_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                                                                        FROM maintenance_window_bypasses b
                                                                       WHERE b.window_id = w.id AND b.ended_at IS NULL
                                                                         AND b.expires_at > now() - interval '1 day'))
                                 ORDER BY w.id), '[]')
        FROM agent JOIN maintenance_windows w
          ON w.agent_labels <@ coalesce((SELECT array_agg(l.label::text) FROM agent_labels l WHERE l.agent_id = agent.id), '{}')) AS windows`,
);

/** A window for the whole agent, or one that names a stack the agent is served (or that stack's generator). */
function reachesStacks(w: ScheduledWindow, stacks: GrantsRow['stacks']): boolean {
  if (!w.stack_ids.length && !w.generator_ids.length) return true;
  return stacks.some((s) => w.stack_ids.includes(s.stack_id) || w.generator_ids.includes(s.generator_id));
}

/** What GET /agents/{id}/grants serves: every grant resolved, and whether whole_cluster is in effect. */
export async function queryAgentGrants(db: Queryable, agentId: string): Promise<AgentGrants> {
  const { rows } = await db.query<GrantsRow>(agentGrantsStatement([agentId]));
  const row = rows[0]!;
  const tenants = row.generators.filter((g) => !g.is_system).length;
  return {
    agent_id: agentId.toLowerCase(),
    tenants,
    generators: row.generators.map(({ grant, ...g }) => {
      const resolved = resolveGrant(grant, g.generator_id);
      return { ...g, grant: resolved, whole_cluster_in_effect: wholeClusterInEffect(resolved, g.is_system, tenants) };
    }),
    stacks: row.stacks.map(({ drift, ...stack }) => (drift ? { ...stack, drift: resolveDriftPolicy(drift, row.labels) } : stack)),
    maintenance: { windows: row.windows.filter((w) => reachesStacks(w, row.stacks)) },
  };
}
