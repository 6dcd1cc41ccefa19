/** A deployment_objects row as the API serializes it (the v1 DeploymentObject). */
export interface DeploymentObjectRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  sequence_id: number;
  stack_id: string;
  yaml_content: string;
  yaml_checksum: string;
  submitted_at: Date;
  is_deletion_marker: boolean;
}

export const DEPLOYMENT_OBJECT_COLUMNS =
  'id, created_at, updated_at, deleted_at, sequence_id, stack_id, yaml_content, yaml_checksum, submitted_at, is_deletion_marker';
