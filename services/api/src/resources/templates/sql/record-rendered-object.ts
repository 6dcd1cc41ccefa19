import type { Queryable } from '@brokkr/db';

export interface RenderProvenance {
  deploymentObjectId: string;
  templateId: string;
  templateVersion: number;
  /** The parameters as given, stored as JSON text (Brokkr's column is text). */
  parameters: unknown;
}

/** Which template version and parameters produced a deployment object (same transaction as the object). */
export async function insertRenderedObject(db: Queryable, p: RenderProvenance): Promise<void> {
  await db.query(
    `INSERT INTO rendered_deployment_objects (deployment_object_id, template_id, template_version, template_parameters)
     VALUES ($1, $2, $3, $4)`,
    [p.deploymentObjectId, p.templateId, p.templateVersion, JSON.stringify(p.parameters ?? null)],
  );
}
