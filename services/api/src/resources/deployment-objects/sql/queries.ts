import type { Queryable } from '@brokkr/db';
import type { ListWindow } from '../../../domain/list-window.ts';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from '../../../domain/deployment-object-row.ts';

/** The read-only statements of deployment objects. */

const D_COLUMNS = DEPLOYMENT_OBJECT_COLUMNS.split(', ')
  .map((c) => `d.${c}`)
  .join(', ');

export async function listStackDeploymentObjects(db: Queryable, stackId: string, window: ListWindow): Promise<DeploymentObjectRow[]> {
  const { rows } = await db.query<DeploymentObjectRow>(
    `SELECT ${DEPLOYMENT_OBJECT_COLUMNS} FROM deployment_objects WHERE stack_id = $1 AND deleted_at IS NULL
      ORDER BY sequence_id DESC LIMIT $2 OFFSET $3`,
    [stackId, window.limit, window.offset],
  );
  return rows;
}

export interface DeploymentObjectWithStack {
  object: DeploymentObjectRow;
  stackGeneratorId: string;
  stackDeleted: boolean;
}

/** A live object with what the access check needs from its stack (deleted stacks included). */
export async function findDeploymentObject(db: Queryable, id: string): Promise<DeploymentObjectWithStack | undefined> {
  const { rows } = await db.query<DeploymentObjectRow & { stack_generator_id: string; stack_deleted: boolean }>(
    `SELECT ${D_COLUMNS},
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
