import type { Queryable } from '@brokkr/db';
import { agentsForOneStackSql, agentsForStacks } from './agents-for-stacks.ts';
import { dependentsOfSql, selectedStacksSql } from './dependency-selectors.ts';

/**
 * Dependencies between stacks (migration 0028, docs/dependencies.md): the one home of the rule
 * "is this dependency ready for this agent". The target-state query (delivery/target-state/sql/)
 * holds a dependent stack back with it, the per-agent status answer names what it waits for with
 * it, and the event and health reports wake whom it may concern with dependencyWatchers below.
 */

/**
 * The dependency's stack is ready on one agent: it is live and the agent's last event for its
 * newest live object is a SUCCESS (`applied`, upper-cased as the target state compares), or the
 * agent reports that object healthy (`healthy`). A deleted dependency is never ready (migration
 * 0028 says why). `dep` is the alias of a stack_dependencies row, `agent` an SQL uuid expression.
 * Each probe is one index lookup: deployment_objects (stack_id, sequence_id DESC), agent_events
 * (agent_id, deployment_object_id), deployment_health (agent_id, deployment_object_id).
 */
function readyOnAgent(dep: string, agent: string): string {
  return `EXISTS (
    SELECT 1 FROM stacks ds
     CROSS JOIN LATERAL (
       SELECT o.id FROM deployment_objects o
        WHERE o.stack_id = ds.id AND o.deleted_at IS NULL
        ORDER BY o.sequence_id DESC LIMIT 1) n
     WHERE ds.id = ${dep}.depends_on AND ds.deleted_at IS NULL
       AND CASE ${dep}.ready_when
             WHEN 'applied' THEN (
               SELECT upper(e.status) FROM agent_events e
                WHERE e.agent_id = ${agent} AND e.deployment_object_id = n.id AND e.deleted_at IS NULL
                ORDER BY e.created_at DESC, e.id DESC LIMIT 1) = 'SUCCESS'
             ELSE EXISTS (
               SELECT 1 FROM deployment_health h
                WHERE h.agent_id = ${agent} AND h.deployment_object_id = n.id AND h.status = 'healthy')
           END)`;
}

/**
 * The dependency (alias `dep`) is ready for `agent` (an SQL uuid expression): scope `agent`, ready
 * on that agent; scope `fleet`, ready on every ACTIVE agent the dependency targets (an inactive
 * agent is served nothing, so it could never be ready and would hold the fleet forever), and it
 * targets at least one (a dependency deployed nowhere is not ready anywhere). One copy of each
 * rule, whichever the scope: the agents to check are `agent` or the dependency's agents, and the
 * other branch is skipped by its one-time filter (the target-state query is planned with this).
 */
export function dependencyReadySql(dep: string, agent: string): string {
  return `coalesce((
    SELECT bool_and(${readyOnAgent(dep, 'chk.id')})
      FROM (SELECT ${agent} AS id WHERE ${dep}.scope = 'agent'
            UNION ALL
            SELECT fa.id FROM (${agentsForOneStackSql(`${dep}.depends_on`)}) fa
              JOIN agents fx ON fx.id = fa.id AND fx.status = 'ACTIVE'
             WHERE ${dep}.scope = 'fleet') chk), false)`;
}

/**
 * Every dependency of stack `stack` that counts for `agent` (SQL uuid expressions), as rows of
 * `(depends_on, ready_when, scope, labels, created_at)` for dependencyReadySql: each direct one
 * (`labels` NULL), and for each selector (migration 0031) each live stack it matches — for scope
 * `agent` only those that reach the agent (a selector matching nothing there is ready), for scope
 * `fleet` all of them. A stack without dependencies pays one probe of each table's index on
 * stack_id.
 */
export function dependencyEdgesSql(stack: string, agent: string): string {
  return `SELECT sd.depends_on, sd.ready_when, sd.scope, NULL::text[] AS labels, sd.created_at
            FROM stack_dependencies sd WHERE sd.stack_id = ${stack}
          UNION ALL
          SELECT ms.id, ss.ready_when, ss.scope, ss.labels, ss.created_at
            FROM stack_dependency_selectors ss
           CROSS JOIN LATERAL (${selectedStacksSql('ss')}) ms
           WHERE ss.stack_id = ${stack}
             AND (ss.scope = 'fleet' OR EXISTS (SELECT 1 FROM (${agentsForOneStackSql('ms.id')}) mr WHERE mr.id = ${agent}))`;
}

/**
 * Reverse-order deletion (docs/dependencies.md): the stacks depending on the deleted stack `stack`
 * (directly or by selector) that still have something on `agent`, as rows of `id`: the dependent
 * reaches the agent and is live, or it is deleted and the agent has not yet posted an event for
 * its deletion marker (the target state serves that marker until it does). While any is left, the
 * agent is not served `stack`'s deletion marker: it removes the dependent first.
 */
export function presentDependentsSql(stack: string, agent: string): string {
  return `SELECT DISTINCT b.id FROM (${dependentsOfSql(stack)}) x
            JOIN stacks b ON b.id = x.stack_id
           WHERE EXISTS (SELECT 1 FROM (${agentsForOneStackSql('b.id')}) br WHERE br.id = ${agent})
             AND (b.deleted_at IS NULL OR EXISTS (
                   SELECT 1 FROM deployment_objects bm
                    WHERE bm.stack_id = b.id AND bm.deleted_at IS NULL AND bm.is_deletion_marker
                      AND NOT EXISTS (SELECT 1 FROM agent_events be
                                       WHERE be.agent_id = ${agent} AND be.deployment_object_id = bm.id AND be.deleted_at IS NULL)))`;
}

/**
 * SQL condition on a deployment_objects row `d`: it is the deletion marker of a stack that depends
 * on others (directly or by selector). The agent's event on it may release the deletion marker of
 * a stack it depended on (reverse-order deletion, presentDependentsSql).
 */
function releasesDependencySql(d: string): string {
  return `(${d}.is_deletion_marker AND (EXISTS (SELECT 1 FROM stack_dependencies rsd WHERE rsd.stack_id = ${d}.stack_id)
                                     OR EXISTS (SELECT 1 FROM stack_dependency_selectors rss WHERE rss.stack_id = ${d}.stack_id)))`;
}

/**
 * Whom an agent's report on `objectIds` (events, health) may concern, when their stacks are ones
 * other stacks depend on: the agent itself for `agent`-scope dependencies (its own dependents'
 * readiness changed), and every agent of a dependent stack for `fleet`-scope ones. The agent itself
 * too when one is the deletion marker of a stack that depends on others: acknowledging it may
 * release the marker of a stack it depended on, which the agent must then be told about (its own
 * report alone hints nothing on its channel). Called only when the report's own statement said so
 * (gatesOnObjectSql), so reports on other stacks pay one EXISTS inside their statement and nothing
 * more.
 */
export async function dependencyWatchers(db: Queryable, agentId: string, objectIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ stack_id: string | null; scope: 'agent' | 'fleet' | null }>(
    `SELECT DISTINCT x.stack_id, x.scope
       FROM deployment_objects d
      CROSS JOIN LATERAL (${dependentsOfSql('d.stack_id')}) x
      WHERE d.id = ANY($1::uuid[])
     UNION ALL
     SELECT NULL, NULL FROM deployment_objects d WHERE d.id = ANY($1::uuid[]) AND ${releasesDependencySql('d')}`,
    [objectIds],
  );
  const ids = rows.some((r) => r.scope !== 'fleet') ? [agentId] : [];
  const fleetStacks = rows.filter((r) => r.scope === 'fleet').map((r) => r.stack_id!);
  return [...ids, ...(await agentsForStacks(db, fleetStacks))];
}

/**
 * An SQL condition: a dependency gates on the stack of object `object` (a uuid expression), directly
 * or by a selector matching it, or the object is the deletion marker of a dependent stack
 * (releasesDependencySql). Index probes per object (OFFSET 0 keeps them probes: pulled up into a
 * join, the planner may scan every dependency); the selector leg reads the stack's labels and
 * probes the selectors' GIN index, nothing when there are no selectors.
 */
export function gatesOnObjectSql(object: string): string {
  return `EXISTS (SELECT 1 FROM deployment_objects gd
                   WHERE gd.id = ${object}
                     AND (EXISTS (${dependentsOfSql('gd.stack_id')}) OR ${releasesDependencySql('gd')})
                  OFFSET 0)`;
}

export interface WaitingAgent {
  agent_id: string;
  /** The first dependency not ready for the agent (oldest first). */
  stack_id: string;
  ready_when: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
}

/**
 * The active agents of the stack that it waits on a dependency for, each with the first dependency
 * not ready there, in agent id order. A stack without dependencies costs one primary-key probe.
 */
export async function waitingAgents(db: Queryable, stackId: string): Promise<WaitingAgent[]> {
  const { rows } = await db.query<WaitingAgent>(
    `SELECT ag.id AS agent_id, w.stack_id, w.ready_when, w.scope
       FROM (SELECT DISTINCT h.id FROM (${agentsForOneStackSql('$1::uuid')}) h) ag
       JOIN agents a ON a.id = ag.id AND a.status = 'ACTIVE'
       CROSS JOIN LATERAL (
         SELECT sd.depends_on AS stack_id, sd.ready_when, sd.scope FROM (${dependencyEdgesSql('$1', 'ag.id')}) sd
          WHERE NOT ${dependencyReadySql('sd', 'ag.id')}
          ORDER BY sd.created_at, sd.depends_on LIMIT 1) w
      WHERE EXISTS (SELECT 1 FROM stack_dependencies x WHERE x.stack_id = $1)
         OR EXISTS (SELECT 1 FROM stack_dependency_selectors x WHERE x.stack_id = $1)
      ORDER BY ag.id`,
    [stackId],
  );
  return rows;
}
