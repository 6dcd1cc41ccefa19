import { z } from 'zod';
import { sourceSpecSchema } from '@brokkr/sources';
import { queryBool } from './schemas.ts';

/**
 * The JSON variant of POST /stacks/{id}/deployment-objects (unknown fields are ignored, as serde
 * does): Brokkr's `yaml_content`, or ours, a `source` (a chart or a kustomize overlay) with the
 * chart's `values`, rendered for each agent (docs/renders.md).
 */
export const newDeploymentObjectSchema = z
  .object({
    yaml_content: z.string().optional().meta({ description: 'The YAML (Brokkr): exactly one of yaml_content and source' }),
    is_deletion_marker: z.boolean().optional(),
    source: sourceSpecSchema
      .optional()
      .meta({ description: 'A Helm chart or a kustomize overlay, fetched and pinned to its digest at submit' }),
    values: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "A chart's values (may refer to the agent: {{ agent.annotations.region }})" }),
  })
  .refine((b) => (b.yaml_content === undefined) !== (b.source === undefined), 'exactly one of yaml_content and source')
  .refine((b) => b.values === undefined || b.source !== undefined, 'values go with a source')
  .refine((b) => !(b.source && b.is_deletion_marker), 'a deletion marker has no source')
  .meta({ id: 'NewDeploymentObject' });

/** `deletion_marker` applies to raw YAML bodies only; the JSON body carries its own flag. */
export const newDeploymentObjectQuery = z.object({ deletion_marker: queryBool().optional() });

const yamlText = z.string().meta({ description: 'One or more YAML documents' });
export const yamlRequestContent = { 'application/yaml': yamlText, 'text/yaml': yamlText, 'application/x-yaml': yamlText };
export const yamlResponseContent = { 'application/yaml': yamlText };
