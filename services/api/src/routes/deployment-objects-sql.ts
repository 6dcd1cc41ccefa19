import { prepared, type Queryable } from '@brokkr/db';
import type { DeploymentObjectRow } from '../targeting/index.ts';

const DO_COLUMNS = 'id, created_at, updated_at, deleted_at, sequence_id, stack_id, yaml_content, yaml_checksum, submitted_at, is_deletion_marker';

export async function listStackDeploymentObjects(db: Queryable, stackId: string): Promise<DeploymentObjectRow[]> {
  const { rows } = await db.query<DeploymentObjectRow>(
    `SELECT ${DO_COLUMNS} FROM deployment_objects WHERE stack_id = $1 AND deleted_at IS NULL ORDER BY sequence_id DESC`,
    [stackId],
  );
  return rows;
}

export interface NewDeploymentObject {
  stackId: string;
  yamlContent: string;
  yamlChecksum: string;
  isDeletionMarker: boolean;
}

const insertStatement = prepared(
  'brokkr_deployment_object_insert',
  `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker)
   VALUES ($1, $2, $3, $4) RETURNING ${DO_COLUMNS}`,
);

/** sequence_id comes from the table's global BIGSERIAL. */
export async function insertDeploymentObject(db: Queryable, object: NewDeploymentObject): Promise<DeploymentObjectRow> {
  const { rows } = await db.query<DeploymentObjectRow>(
    insertStatement([object.stackId, object.yamlContent, object.yamlChecksum, object.isDeletionMarker]),
  );
  return rows[0]!;
}

export interface DeploymentObjectWithStack {
  object: DeploymentObjectRow;
  stackGeneratorId: string;
  stackDeleted: boolean;
}

/** A live object with what the access check needs from its stack (deleted stacks included). */
export async function findDeploymentObject(db: Queryable, id: string): Promise<DeploymentObjectWithStack | undefined> {
  const { rows } = await db.query<DeploymentObjectRow & { stack_generator_id: string; stack_deleted: boolean }>(
    `SELECT ${DO_COLUMNS.split(', ').map((c) => `d.${c}`).join(', ')},
            s.generator_id AS stack_generator_id, s.deleted_at IS NOT NULL AS stack_deleted
       FROM deployment_objects d JOIN stacks s ON s.id = d.stack_id
      WHERE d.id = $1 AND d.deleted_at IS NULL`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { stack_generator_id, stack_deleted, ...object } = row;
  return { object, stackGeneratorId: stack_generator_id, stackDeleted: stack_deleted };
}
