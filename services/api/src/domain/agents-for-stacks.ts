import { prepared, type Queryable } from '@brokkr/db';

/**
 * Rows a change is about to remove still decide who must be woken: an agent that matched a stack
 * only through a label being deleted loses that stack, so its target state changes too. Callers
 * pass what they remove (or the old generator of a stack being moved) and the query treats the
 * stacks as if they still had it.
 */
export interface AlsoMatching {
  labels?: readonly string[];
  annotations?: readonly (readonly [key: string, value: string])[];
  generatorIds?: readonly string[];
}

/**
 * The live agents associated with any of the given stacks (same rule as services/api/src/domain/association.ts, read
 * from the stack side: stack_labels → agent_labels(label), stack_annotations →
 * agent_annotations(key), agent_targets(stack_id)). Deleted stacks count: deleting a stack must
 * wake the agents that will now receive its deletion marker. Agent status is not filtered: waking
 * an inactive agent costs nothing and its answer is simply still empty.
 */
export function agentsForStacksSql(p: { stacks: string; labels: string; keys: string; values: string; generators: string }): string {
  return `
WITH st AS (
  SELECT s.id, s.generator_id FROM stacks s WHERE s.id = ANY(${p.stacks})
),
gens AS (
  SELECT st.id AS stack_id, st.generator_id FROM st
  UNION SELECT st.id, g.id FROM st CROSS JOIN unnest(${p.generators}) AS g(id)
),
labels AS (
  SELECT sl.stack_id, sl.label FROM stack_labels sl JOIN st ON st.id = sl.stack_id
  UNION SELECT st.id, l.label FROM st CROSS JOIN unnest(${p.labels}) AS l(label)
),
annotations AS (
  SELECT sa.stack_id, sa.key, sa.value FROM stack_annotations sa JOIN st ON st.id = sa.stack_id
  UNION SELECT st.id, x.key, x.value FROM st CROSS JOIN unnest(${p.keys}, ${p.values}) AS x(key, value)
),
matched AS (
  SELECT al.agent_id
    FROM labels l
    JOIN agent_labels al ON al.label = l.label
    JOIN gens g ON g.stack_id = l.stack_id
    JOIN agent_generator_registrations r ON r.agent_id = al.agent_id AND r.generator_id = g.generator_id
  UNION
  SELECT aa.agent_id
    FROM annotations a
    JOIN agent_annotations aa ON aa.key = a.key AND aa.value = a.value
    JOIN gens g ON g.stack_id = a.stack_id
    JOIN agent_generator_registrations r ON r.agent_id = aa.agent_id AND r.generator_id = g.generator_id
  UNION
  SELECT t.agent_id FROM agent_targets t JOIN st ON st.id = t.stack_id
)
SELECT a.id FROM agents a JOIN matched m ON m.agent_id = a.id
 WHERE a.deleted_at IS NULL
 ORDER BY a.id`;
}

/**
 * agentsForStacksSql for ONE stack and nothing removed: the same rule with every leg driven by an
 * index from the stack (stack_labels(stack_id) → agent_labels(label), stack_annotations(stack_id)
 * → agent_annotations(key, value), agent_targets(stack_id)). The general query's CTEs and
 * UNIONs with the `also` arrays cost ~0.2 ms per call and hash-joined a full scan of
 * agent_annotations (ADR 0027). It leaves out the DISTINCT and the ORDER BY too (their
 * HashAggregate and Sort were a third of its cost, most of it setting the nodes up on every
 * execution): an agent matched by two legs comes twice, in no order, and callers pass the ids
 * through distinctSorted(). `stack` is an SQL uuid expression (a parameter). A test
 * (wake-list.test.ts) checks it gives agentsForStacks' answer.
 *
 * The matches are MATERIALIZED, then joined to the live agents: with statistics that do not yet
 * know the agents (a fleet registered in bulk, before autovacuum analyzed the tables) the planner
 * put `agents` outermost and ran the label leg once per agent, 0.4 s of CPU for 1,000 agents;
 * a burst of 100 such writes took 24 s (ADR 0035, docs/perf/2026-11-27-fleet-holds.md).
 */
export function agentsForOneStackSql(stack: string): string {
  return `
WITH m AS MATERIALIZED (
        SELECT al.agent_id
          FROM stack_labels sl
          JOIN stacks s ON s.id = sl.stack_id
          JOIN agent_labels al ON al.label = sl.label
          JOIN agent_generator_registrations r ON r.agent_id = al.agent_id AND r.generator_id = s.generator_id
         WHERE sl.stack_id = ${stack}
        UNION ALL
        SELECT aa.agent_id
          FROM stack_annotations sa
          JOIN stacks s ON s.id = sa.stack_id
          JOIN agent_annotations aa ON aa.key = sa.key AND aa.value = sa.value
          JOIN agent_generator_registrations r ON r.agent_id = aa.agent_id AND r.generator_id = s.generator_id
         WHERE sa.stack_id = ${stack}
        UNION ALL
        SELECT t.agent_id FROM agent_targets t WHERE t.stack_id = ${stack})
SELECT a.id
  FROM m
  JOIN agents a ON a.id = m.agent_id
 WHERE a.deleted_at IS NULL`;
}

/** Distinct ids in PostgreSQL's uuid order (byte order = the order of their lowercase hex text). */
export function distinctSorted(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort();
}

const agentsForOneStackStatement = prepared('brokkr_agents_for_one_stack', agentsForOneStackSql('$1::uuid'));

const AGENTS_FOR_STACKS_SQL = agentsForStacksSql({
  stacks: '$1::uuid[]',
  labels: '$2::text[]',
  keys: '$3::text[]',
  values: '$4::text[]',
  generators: '$5::uuid[]',
});

const agentsForStacksStatement = prepared('brokkr_agents_for_stacks', AGENTS_FOR_STACKS_SQL);

/**
 * One query whatever the number of stacks; returns agent ids (sorted, distinct).
 *
 * Who must be woken when a stack changes: call it inside the write's transaction (`tx.client`)
 * and pass the result to `tx.notifyAgents(...)`, which publishes `brokkr.notify.agent.<id>` after
 * commit (stacks/wake-agents.ts does both). Needed for: a new deployment object, a stack label or
 * annotation added or removed, a stack deleted, a stack's generator changed. For removals, run it
 * after the DELETE but pass what was removed in `also` (`{ labels: [label] }`,
 * `{ annotations: [[key, value]] }`, `{ generatorIds: [oldGeneratorId] }`) so the agents that just
 * lost the stack are woken too. Agent-side changes (labels, annotations, targets, status, events,
 * registrations) wake the agent itself with `tx.notifyAgents([agentId])`.
 */
export async function agentsForStacks(db: Queryable, stackIds: readonly string[], also: AlsoMatching = {}): Promise<string[]> {
  if (stackIds.length === 0) return [];
  const annotations = also.annotations ?? [];
  const { rows } = await db.query<{ id: string }>(
    agentsForStacksStatement([
      stackIds,
      also.labels ?? [],
      annotations.map(([key]) => key),
      annotations.map(([, value]) => value),
      also.generatorIds ?? [],
    ]),
  );
  return rows.map((r) => r.id);
}

/** The agents whose target state depends on this stack (see agentsForStacks). */
export async function agentsForStack(db: Queryable, stackId: string, also: AlsoMatching = {}): Promise<string[]> {
  const removesSomething = (also.labels?.length ?? 0) + (also.annotations?.length ?? 0) + (also.generatorIds?.length ?? 0) > 0;
  if (removesSomething) return agentsForStacks(db, [stackId], also);
  const { rows } = await db.query<{ id: string }>(agentsForOneStackStatement([stackId]));
  return distinctSorted(rows.map((r) => r.id));
}
