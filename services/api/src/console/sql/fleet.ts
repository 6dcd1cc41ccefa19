import type { Queryable } from '@brokkr/db';
import { A_COLUMNS, type AgentRow } from '../../domain/agent-row.ts';

/**
 * The console's fleet page: one page of agents with their health counts, and counts over the
 * whole visible fleet. `generatorId` null = every live agent (admin); otherwise the agents
 * registered with that generator (the same tenant view as GET /agents).
 */

export interface FleetFilter {
  generatorId: string | null;
  /** Case-insensitive substring of the name or cluster name; '' = no filter. */
  search: string;
}

export interface HealthCounts {
  healthy: number;
  degraded: number;
  failing: number;
  unknown: number;
}

export type FleetAgent = AgentRow & { health: HealthCounts };

export interface FleetSummary {
  total: number;
  active: number;
  inactive: number;
  k8s_unreachable: number;
  never_seen: number;
  health: HealthCounts;
}

/** LIKE wildcards in the search are literal characters. */
const likePattern = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const VISIBLE = `a.deleted_at IS NULL
  AND ($1::uuid IS NULL OR EXISTS (SELECT 1 FROM agent_generator_registrations r WHERE r.agent_id = a.id AND r.generator_id = $1))
  AND ($2::text = '%%' OR a.name ILIKE $2 OR a.cluster_name ILIKE $2)`;

// Health of live deployment objects only: a deleted object's last report is history, not state.
const HEALTH_COUNTS = `
  count(*) FILTER (WHERE h.status = 'healthy')::int AS healthy,
  count(*) FILTER (WHERE h.status = 'degraded')::int AS degraded,
  count(*) FILTER (WHERE h.status = 'failing')::int AS failing,
  count(*) FILTER (WHERE h.status NOT IN ('healthy', 'degraded', 'failing'))::int AS unknown`;

export async function fleetPage(db: Queryable, filter: FleetFilter, limit: number, offset: number): Promise<FleetAgent[]> {
  const { rows } = await db.query<AgentRow & HealthCounts>(
    `SELECT ${A_COLUMNS}, hc.healthy, hc.degraded, hc.failing, hc.unknown
       FROM agents a
       CROSS JOIN LATERAL (
         SELECT ${HEALTH_COUNTS}
           FROM deployment_health h JOIN deployment_objects d ON d.id = h.deployment_object_id AND d.deleted_at IS NULL
          WHERE h.agent_id = a.id) hc
      WHERE ${VISIBLE}
      ORDER BY a.name, a.cluster_name, a.id
      LIMIT $3 OFFSET $4`,
    [filter.generatorId, likePattern(filter.search), limit, offset],
  );
  return rows.map(({ healthy, degraded, failing, unknown, ...agent }) => ({ ...agent, health: { healthy, degraded, failing, unknown } }));
}

export async function fleetSummary(db: Queryable, filter: FleetFilter): Promise<FleetSummary> {
  const agents = db.query<Omit<FleetSummary, 'health'>>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE a.status = 'ACTIVE')::int AS active,
            count(*) FILTER (WHERE a.status <> 'ACTIVE')::int AS inactive,
            count(*) FILTER (WHERE a.k8s_reachable = false)::int AS k8s_unreachable,
            count(*) FILTER (WHERE a.last_heartbeat IS NULL)::int AS never_seen
       FROM agents a WHERE ${VISIBLE}`,
    [filter.generatorId, likePattern(filter.search)],
  );
  const health = db.query<HealthCounts>(
    `SELECT ${HEALTH_COUNTS}
       FROM deployment_health h
       JOIN deployment_objects d ON d.id = h.deployment_object_id AND d.deleted_at IS NULL
       JOIN agents a ON a.id = h.agent_id
      WHERE ${VISIBLE}`,
    [filter.generatorId, likePattern(filter.search)],
  );
  const [a, h] = await Promise.all([agents, health]);
  return { ...a.rows[0]!, health: h.rows[0]! };
}
