import type { Queryable } from '@brokkr/db';
import type { RenderableObject } from './latest-object.ts';
import type { AgentRender } from './renders.ts';

/**
 * Every object rendered per agent that is its stack's newest (the one agents are served, rollouts
 * aside): what the sweep keeps rendered for each agent of its stack. Starts from rendered_objects,
 * the few objects that are rendered at all.
 */
export async function latestRenderedObjects(db: Queryable): Promise<(RenderableObject & { stack_id: string })[]> {
  const { rows } = await db.query<RenderableObject & { stack_id: string }>(
    `SELECT o.id, o.stack_id, o.yaml_content, o.yaml_checksum, ro.source, ro.source_values, true AS per_agent, s.name AS stack_name, s.generator_id
       FROM rendered_objects ro
       JOIN deployment_objects o ON o.id = ro.deployment_object_id AND o.deleted_at IS NULL AND NOT o.is_deletion_marker
       JOIN stacks s ON s.id = o.stack_id AND s.deleted_at IS NULL
      WHERE NOT EXISTS (SELECT 1 FROM deployment_objects n WHERE n.stack_id = o.stack_id AND n.deleted_at IS NULL AND n.sequence_id > o.sequence_id)
      ORDER BY o.sequence_id`,
  );
  return rows;
}

/** Which render each agent has of the object, and its last failure. */
export interface HeldRender {
  key: string | null;
  inputKey: string | null;
  error: string | null;
}

export async function agentRendersOf(db: Queryable, objectId: string): Promise<Map<string, HeldRender>> {
  const { rows } = await db.query<{ agent_id: string; render_key: string | null; input_key: string | null; error: string | null }>(
    'SELECT agent_id, render_key, input_key, error FROM agent_renders WHERE deployment_object_id = $1',
    [objectId],
  );
  return new Map(rows.map((r) => [r.agent_id, { key: r.render_key, inputKey: r.input_key, error: r.error }]));
}

/**
 * Failed renders: an agent that had none keeps none (it is served nothing of the stack); an agent
 * that had one keeps it (the failure is recorded beside it: changing its labels or its cluster must
 * not take away what it runs).
 */
export async function recordRenderFailures(db: Queryable, objectId: string, failures: readonly AgentRender[]): Promise<void> {
  if (failures.length === 0) return;
  await db.query(
    `INSERT INTO agent_renders (agent_id, deployment_object_id, render_key, input_key, error, layers)
     SELECT a, $1, NULL, i, e, l FROM unnest($2::uuid[], $3::text[], $4::text[], $5::jsonb[]) AS x(a, i, e, l)
     ON CONFLICT (agent_id, deployment_object_id) DO UPDATE SET input_key = EXCLUDED.input_key, error = EXCLUDED.error, rendered_at = now()`,
    [
      objectId,
      failures.map((f) => f.agentId),
      failures.map((f) => f.inputKey),
      failures.map((f) => f.error),
      failures.map((f) => JSON.stringify(f.layers)),
    ],
  );
}

/** Whether the stack's layers are still at `revision`, the row locked until the sweep's write commits. */
export async function layersStillAt(db: Queryable, stackId: string, revision: number): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM stacks WHERE id = $1 AND layers_revision = $2 AND deleted_at IS NULL FOR SHARE', [
    stackId,
    revision,
  ]);
  return rows.length > 0;
}
