import { prepared, type Queryable } from '@brokkr/db';
import { servedToAgent } from '../../../domain/association.ts';

/** A chart or an overlay an agent is served: its pinned source and values, and its stack's name (the release's). */
export interface ServedRenderedObject {
  id: string;
  stack_id: string;
  stack_name: string;
  source: { helm?: { digest: string }; kustomize?: { digest: string; path: string } } | null;
  source_values: Record<string, unknown> | null;
}

// Only an object the agent is served (the relay rule of GET /agents/{id}/signatures): another
// tenant's chart, values and signatures are none of its business.
const servedRenderedStatement = prepared(
  'brokkr_render_inputs_served_object',
  `SELECT d.id, d.stack_id, s.name AS stack_name, ro.source, ro.source_values
     FROM deployment_objects d
     JOIN stacks s ON s.id = d.stack_id
     JOIN rendered_objects ro ON ro.deployment_object_id = d.id
    WHERE d.id = $2::uuid AND d.deleted_at IS NULL AND ro.source IS NOT NULL AND ${servedToAgent('$2::uuid', '$1::uuid')}`,
);

export async function servedRenderedObject(db: Queryable, agentId: string, objectId: string): Promise<ServedRenderedObject | undefined> {
  const { rows } = await db.query<ServedRenderedObject>(servedRenderedStatement([agentId, objectId]));
  return rows[0];
}

const stackSignaturesStatement = prepared(
  'brokkr_render_inputs_stack_signatures',
  `SELECT bundle FROM signatures WHERE stack_id = $1 ORDER BY version DESC NULLS LAST, id DESC LIMIT $2`,
);

/** The stack's newest signatures, newest first: the one whose statement names the object's inputs is relayed. */
export async function newestStackSignatures(db: Queryable, stackId: string, limit: number): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<{ bundle: Record<string, unknown> }>(stackSignaturesStatement([stackId, limit]));
  return rows.map((r) => r.bundle);
}

/** A deployment object instantiated from a template that an agent is served: the template version and parameters it was made from. */
export interface ServedTemplateObject {
  id: string;
  stack_id: string;
  template_content: string;
  parameters_schema: string;
  /** JSON text, as the provenance row keeps it. */
  template_parameters: string | null;
}

// The provenance row (rendered_deployment_objects) names the exact template version; a version
// soft-deleted since still renders the object it made, so deleted_at is not filtered here.
const servedTemplateStatement = prepared(
  'brokkr_render_inputs_served_template_object',
  `SELECT d.id, d.stack_id, t.template_content, t.parameters_schema, rdo.template_parameters
     FROM deployment_objects d
     JOIN rendered_deployment_objects rdo ON rdo.deployment_object_id = d.id
     JOIN stack_templates t ON t.id = rdo.template_id AND t.version = rdo.template_version
    WHERE d.id = $2::uuid AND d.deleted_at IS NULL AND ${servedToAgent('$2::uuid', '$1::uuid')}`,
);

export async function servedTemplateObject(db: Queryable, agentId: string, objectId: string): Promise<ServedTemplateObject | undefined> {
  const { rows } = await db.query<ServedTemplateObject>(servedTemplateStatement([agentId, objectId]));
  return rows[0];
}

/** Plain YAML an agent is served from a stack with override layers: its YAML exactly as posted. */
export interface ServedPlainObject {
  id: string;
  stack_id: string;
  yaml_content: string;
}

// Neither a chart or an overlay (a rendered_objects row with a source) nor made from a template:
// what the generator posted. Without layers its served bytes are signed as they are (kind raw), so
// nothing is relayed then.
const servedPlainStatement = prepared(
  'brokkr_render_inputs_served_plain_object',
  `SELECT d.id, d.stack_id, d.yaml_content
     FROM deployment_objects d
    WHERE d.id = $2::uuid AND d.deleted_at IS NULL AND NOT d.is_deletion_marker
      AND NOT EXISTS (SELECT 1 FROM rendered_objects ro WHERE ro.deployment_object_id = d.id AND ro.source IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM rendered_deployment_objects rdo WHERE rdo.deployment_object_id = d.id)
      AND EXISTS (SELECT 1 FROM stack_overrides o WHERE o.stack_id = d.stack_id)
      AND ${servedToAgent('$2::uuid', '$1::uuid')}`,
);

export async function servedPlainObject(db: Queryable, agentId: string, objectId: string): Promise<ServedPlainObject | undefined> {
  const { rows } = await db.query<ServedPlainObject>(servedPlainStatement([agentId, objectId]));
  return rows[0];
}
