import { prepared, type Queryable } from '@brokkr/db';
import { agentsForOneStackSql } from '../../domain/agents-for-stacks.ts';
import type { AgentView } from '@brokkr/overrides';

/** The agents associated with the stack (the association rule), as a render sees them: names, tags, annotations, facts. */
const stackAgentsStatement = prepared(
  'brokkr_render_stack_agents',
  `WITH ids AS (${agentsForOneStackSql('$1::uuid')})
   SELECT a.id, a.name, a.cluster_name, coalesce(a.facts, '{}') AS facts, md5(coalesce(a.facts, '{}')::text) AS facts_key,
          ARRAY(SELECT l.label FROM agent_labels l WHERE l.agent_id = a.id ORDER BY l.label) AS labels,
          (SELECT coalesce(jsonb_object_agg(n.key, n.value), '{}') FROM agent_annotations n WHERE n.agent_id = a.id) AS annotations
     FROM agents a
    WHERE a.id IN (SELECT id FROM ids)
    ORDER BY a.id`,
);

export async function stackAgents(db: Queryable, stackId: string): Promise<AgentView[]> {
  const { rows } = await db.query<AgentView>(stackAgentsStatement([stackId]));
  return rows;
}

/** The same view of given agents (the explain endpoint, an agent targeted later). */
export async function agentViews(db: Queryable, agentIds: readonly string[]): Promise<AgentView[]> {
  const { rows } = await db.query<AgentView>(
    `SELECT a.id, a.name, a.cluster_name, coalesce(a.facts, '{}') AS facts, md5(coalesce(a.facts, '{}')::text) AS facts_key,
            ARRAY(SELECT l.label FROM agent_labels l WHERE l.agent_id = a.id ORDER BY l.label) AS labels,
            (SELECT coalesce(jsonb_object_agg(n.key, n.value), '{}') FROM agent_annotations n WHERE n.agent_id = a.id) AS annotations
       FROM agents a WHERE a.id = ANY($1::uuid[]) AND a.deleted_at IS NULL ORDER BY a.id`,
    [agentIds],
  );
  return rows;
}

/**
 * A digest of everything the stack's agents give a render (the association rule's agents, their
 * names, cluster, facts, labels and annotations, in order): equal digests, equal plans. Computed in
 * PostgreSQL, so a sweep that finds nothing changed reads one row, not every agent.
 */
const stackAgentsDigestStatement = prepared(
  'brokkr_render_stack_agents_digest',
  `WITH ids AS (${agentsForOneStackSql('$1::uuid')})
   SELECT md5(coalesce(string_agg(concat_ws(E'\\x1f', a.id::text, a.name, a.cluster_name, coalesce(a.facts, '{}')::text,
            coalesce((SELECT string_agg(l.label, ',' ORDER BY l.label) FROM agent_labels l WHERE l.agent_id = a.id), ''),
            coalesce((SELECT jsonb_object_agg(n.key, n.value)::text FROM agent_annotations n WHERE n.agent_id = a.id), '')), E'\\n' ORDER BY a.id), '')) AS digest
     FROM agents a
    WHERE a.id IN (SELECT id FROM ids)`,
);

export async function stackAgentsDigest(db: Queryable, stackId: string): Promise<string> {
  const { rows } = await db.query<{ digest: string }>(stackAgentsDigestStatement([stackId]));
  return rows[0]!.digest;
}
