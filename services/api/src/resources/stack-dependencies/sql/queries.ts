import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../../auth/identity.ts';
import { raising } from '../../../errors/api-error.ts';
import { stackNotFound, stackNotOwned } from '../../../errors/catalogue.ts';
import { agentsForOneStackSql } from '../../../domain/agents-for-stacks.ts';
import { rolloutHoldsSql } from '../../../domain/rollout-hold.ts';
import { dependencyEdgesSql, dependencyReadySql, presentDependentsSql } from '../../../domain/stack-dependencies.ts';
import { DEPENDENCY_COLUMNS, type DependencyRow } from './dependency-row.ts';

/** A stack's dependencies, oldest first. */
export async function listDependencies(db: Queryable, stackId: string): Promise<DependencyRow[]> {
  const { rows } = await db.query<DependencyRow>(
    `SELECT ${DEPENDENCY_COLUMNS} FROM stack_dependencies WHERE stack_id = $1 ORDER BY created_at, depends_on`,
    [stackId],
  );
  return rows;
}

export interface UnmetDependency {
  stack_id: string;
  ready_when: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
  selector?: { labels: string[] };
}

export interface AgentStackView {
  agent_exists: boolean;
  reaches: boolean;
  has_object: boolean;
  /** The dependencies not ready for the agent, oldest first (a selector's: each stack it matches that is not). */
  waiting_on: UnmetDependency[];
  /** A deleted stack: the stacks depending on it still on the agent, which hold its deletion marker back. */
  dependents: string[] | null;
  /** The rollout of the stack's newest object that holds the agent on its baseline, if one does. */
  held_by: { rollout_id: string; status: string; wave: number | null; approval_wave: number | null } | null;
  /** The agent reported a SUCCESS for the stack's newest live object: it is on the cluster, whatever a window says now. */
  newest_applied: boolean;
}

/**
 * What decides whether the agent is served the stack now, in one round trip: the agent (live), the
 * association (domain/agents-for-stacks.ts), a live object, each dependency not ready for the agent
 * and the rollout holding it on a baseline, by the rules the target state serves with
 * (domain/stack-dependencies.ts, domain/rollout-hold.ts).
 */
export async function agentStackView(db: Queryable, stackId: string, agentId: string): Promise<AgentStackView> {
  const { rows } = await db.query<AgentStackView>(
    `SELECT EXISTS (SELECT 1 FROM agents WHERE id = $2 AND deleted_at IS NULL) AS agent_exists,
            EXISTS (SELECT 1 FROM (${agentsForOneStackSql('$1::uuid')}) r WHERE r.id = $2) AS reaches,
            EXISTS (SELECT 1 FROM deployment_objects o WHERE o.stack_id = $1 AND o.deleted_at IS NULL) AS has_object,
            coalesce((SELECT json_agg(json_strip_nulls(json_build_object('stack_id', sd.depends_on, 'ready_when', sd.ready_when, 'scope', sd.scope,
                                                                         'selector', CASE WHEN sd.labels IS NOT NULL THEN json_build_object('labels', sd.labels) END))
                                      ORDER BY sd.created_at, sd.depends_on)
                        FROM (${dependencyEdgesSql('$1::uuid', '$2::uuid')}) sd
                       WHERE NOT st.deleted AND NOT ${dependencyReadySql('sd', '$2::uuid')}), '[]') AS waiting_on,
            CASE WHEN st.deleted THEN (
              SELECT coalesce(json_agg(pd.id ORDER BY pd.id), '[]') FROM (${presentDependentsSql('$1::uuid', '$2::uuid')}) pd
               WHERE NOT EXISTS (SELECT 1 FROM agent_events me
                                  JOIN deployment_objects mo ON mo.id = me.deployment_object_id
                                 WHERE me.agent_id = $2 AND mo.stack_id = $1 AND mo.deleted_at IS NULL AND mo.is_deletion_marker
                                   AND me.deleted_at IS NULL)) END AS dependents,
            (SELECT json_build_object('rollout_id', r.id, 'status', r.status, 'approval_wave', r.approval_wave,
                                      'wave', (SELECT ra.wave FROM rollout_agents ra WHERE ra.rollout_id = r.id AND ra.agent_id = $2))
               FROM rollouts r
              WHERE r.deployment_object_id = (SELECT o.id FROM deployment_objects o WHERE o.stack_id = $1 AND o.deleted_at IS NULL
                                               ORDER BY o.sequence_id DESC LIMIT 1)
                AND ${rolloutHoldsSql('r', '$2::uuid')}) AS held_by,
            EXISTS (SELECT 1 FROM agent_events e
                     WHERE e.agent_id = $2 AND e.status = 'SUCCESS' AND e.deleted_at IS NULL
                       AND e.deployment_object_id = (SELECT o.id FROM deployment_objects o WHERE o.stack_id = $1 AND o.deleted_at IS NULL
                                                      ORDER BY o.sequence_id DESC LIMIT 1)) AS newest_applied
       FROM (SELECT EXISTS (SELECT 1 FROM stacks WHERE id = $1 AND deleted_at IS NOT NULL) AS deleted) st`,
    [stackId, agentId],
  );
  return rows[0]!;
}

/**
 * fetchOwnedStack's rule for a stack deleted or not: the status answer is asked about a deleted
 * stack too, whose deletion marker may wait for the stacks depending on it (404 for an unknown
 * stack, 403 for another generator's).
 */
export const fetchOwnedStackEvenDeleted = raising(
  async (db: Queryable, identity: Identity, stackId: string): Promise<{ id: string; generator_id: string }> => {
    const { rows } = await db.query<{ id: string; generator_id: string }>('SELECT id, generator_id FROM stacks WHERE id = $1', [stackId]);
    const stack = rows[0];
    if (!stack) throw stackNotFound();
    if (!identity.admin && identity.generator !== stack.generator_id) throw stackNotOwned();
    return stack;
  },
  stackNotFound,
  stackNotOwned,
);
