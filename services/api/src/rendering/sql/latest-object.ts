import type { Queryable } from '@brokkr/db';

/** A stack's newest live object, as a render needs it (its source, values and own YAML). */
export interface RenderableObject {
  id: string;
  yaml_content: string;
  yaml_checksum: string;
  source: Record<string, unknown> | null;
  source_values: Record<string, unknown> | null;
  /** Whether each agent already gets its own render of it. */
  per_agent: boolean;
  stack_name: string;
  generator_id: string;
}

export async function latestRenderableObject(db: Queryable, stackId: string): Promise<RenderableObject | undefined> {
  const { rows } = await db.query<RenderableObject>(
    `SELECT o.id, o.yaml_content, o.yaml_checksum, ro.source, ro.source_values, ro.deployment_object_id IS NOT NULL AS per_agent, s.name AS stack_name, s.generator_id
       FROM stacks s
       JOIN LATERAL (
         SELECT * FROM deployment_objects d WHERE d.stack_id = s.id AND d.deleted_at IS NULL ORDER BY d.sequence_id DESC LIMIT 1
       ) o ON true
       LEFT JOIN rendered_objects ro ON ro.deployment_object_id = o.id
      WHERE s.id = $1 AND s.deleted_at IS NULL AND NOT o.is_deletion_marker`,
    [stackId],
  );
  return rows[0];
}

/** Only the id of that object (null: none, or a deletion marker), read again where a write must know it has not changed. */
export async function latestObjectId(db: Queryable, stackId: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string; is_deletion_marker: boolean }>(
    `SELECT id, is_deletion_marker FROM deployment_objects WHERE stack_id = $1 AND deleted_at IS NULL ORDER BY sequence_id DESC LIMIT 1`,
    [stackId],
  );
  const row = rows[0];
  return row && !row.is_deletion_marker ? row.id : null;
}
