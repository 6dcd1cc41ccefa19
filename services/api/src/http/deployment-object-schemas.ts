import { z } from 'zod';
import { queryBool } from './schemas.ts';

/** The JSON variant of POST /stacks/{id}/deployment-objects (unknown fields are ignored, as serde does). */
export const newDeploymentObjectSchema = z
  .object({ yaml_content: z.string(), is_deletion_marker: z.boolean().optional() })
  .meta({ id: 'NewDeploymentObject' });

/** `deletion_marker` applies to raw YAML bodies only; the JSON body carries its own flag. */
export const newDeploymentObjectQuery = z.object({ deletion_marker: queryBool().optional() });

const yamlText = z.string().meta({ description: 'One or more YAML documents' });
export const yamlRequestContent = { 'application/yaml': yamlText, 'text/yaml': yamlText, 'application/x-yaml': yamlText };
export const yamlResponseContent = { 'application/yaml': yamlText };
