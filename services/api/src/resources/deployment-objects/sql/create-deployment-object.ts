import { prepared, type Queryable } from '@brokkr/db';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from './deployment-object-row.ts';

export interface NewDeploymentObject {
  stackId: string;
  yamlContent: string;
  yamlChecksum: string;
  isDeletionMarker: boolean;
}

const insertStatement = prepared(
  'brokkr_deployment_object_insert',
  `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker)
   VALUES ($1, $2, $3, $4) RETURNING ${DEPLOYMENT_OBJECT_COLUMNS}`,
);

/** sequence_id comes from the table's global BIGSERIAL. */
export async function insertDeploymentObject(db: Queryable, object: NewDeploymentObject): Promise<DeploymentObjectRow> {
  const { rows } = await db.query<DeploymentObjectRow>(
    insertStatement([object.stackId, object.yamlContent, object.yamlChecksum, object.isDeletionMarker]),
  );
  return rows[0]!;
}
