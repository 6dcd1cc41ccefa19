import { z } from 'zod';
import { timestamp, uuid } from '../http/schemas.ts';

/** Brokkr's DeploymentObject JSON, as target-state returns it. */
export const deploymentObjectSchema = z.object({
  id: uuid(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted_at: timestamp().nullable(),
  sequence_id: z.number().int(),
  stack_id: uuid(),
  yaml_content: z.string(),
  yaml_checksum: z.string(),
  submitted_at: timestamp(),
  is_deletion_marker: z.boolean(),
});
