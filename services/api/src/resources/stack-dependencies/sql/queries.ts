import type { Queryable } from '@brokkr/db';
import { agentsForOneStackSql } from '../../../domain/agents-for-stacks.ts';
import { dependencyReadySql } from '../../../domain/stack-dependencies.ts';
import { DEPENDENCY_COLUMNS, type DependencyRow } from './dependency-row.ts';

/** A stack's dependencies, oldest first. */
export async function listDependencies(db: Queryable, stackId: string): Promise<DependencyRow[]> {
  const { rows } = await db.query<DependencyRow>(
    `SELECT ${DEPENDENCY_COLUMNS} FROM stack_dependencies WHERE stack_id = $1 ORDER BY created_at, depends_on`,
    [stackId],
  );
  return rows;
}

/**
 * A path of dependencies from `from` to `to` (`from` first, `to` last), or undefined: adding the
 * edge `to → from` would close a cycle exactly when there is one. The graph is acyclic (every
 * write checks this under the graph's lock, sql/lock-graph.ts), so the walk ends; the path array
 * also stops it on a cycle that somehow got in.
 */
export async function dependencyPath(db: Queryable, from: string, to: string): Promise<string[] | undefined> {
  const { rows } = await db.query<{ path: string[] }>(
    `WITH RECURSIVE walk(node, path) AS (
       SELECT $1::uuid, ARRAY[$1::uuid]
       UNION ALL
       SELECT sd.depends_on, w.path || sd.depends_on
         FROM walk w JOIN stack_dependencies sd ON sd.stack_id = w.node
        WHERE w.node <> $2::uuid AND NOT sd.depends_on = ANY(w.path)
     )
     SELECT path::text[] AS path FROM walk WHERE node = $2::uuid LIMIT 1`,
    [from, to],
  );
  return rows[0]?.path;
}

export interface AgentStackView {
  agent_exists: boolean;
  reaches: boolean;
  has_object: boolean;
  /** The dependencies not ready for the agent, oldest first. */
  waiting_on: { stack_id: string; ready_when: 'applied' | 'healthy'; scope: 'agent' | 'fleet' }[];
}

/**
 * What decides whether the agent is served the stack now, in one round trip: the agent (live), the
 * association (domain/agents-for-stacks.ts), a live object, and each dependency not ready for the
 * agent by the rule the target state holds the stack back with (domain/stack-dependencies.ts).
 */
export async function agentStackView(db: Queryable, stackId: string, agentId: string): Promise<AgentStackView> {
  const { rows } = await db.query<AgentStackView>(
    `SELECT EXISTS (SELECT 1 FROM agents WHERE id = $2 AND deleted_at IS NULL) AS agent_exists,
            EXISTS (SELECT 1 FROM (${agentsForOneStackSql('$1::uuid')}) r WHERE r.id = $2) AS reaches,
            EXISTS (SELECT 1 FROM deployment_objects o WHERE o.stack_id = $1 AND o.deleted_at IS NULL) AS has_object,
            coalesce((SELECT json_agg(json_build_object('stack_id', sd.depends_on, 'ready_when', sd.ready_when, 'scope', sd.scope)
                                      ORDER BY sd.created_at, sd.depends_on)
                        FROM stack_dependencies sd
                       WHERE sd.stack_id = $1 AND NOT ${dependencyReadySql('sd', '$2::uuid')}), '[]') AS waiting_on`,
    [stackId, agentId],
  );
  return rows[0]!;
}
