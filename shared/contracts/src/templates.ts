import { z } from 'zod';
import { softDeletableRow, timestamp, uuid } from './wire.ts';

/**
 * Stack templates: Tera templates with a JSON Schema for their parameters,
 * versioned by (owner, name), instantiated into a stack as a deployment object
 * (`POST /stacks/{id}/deployment-objects/from-template`). The hub serves these shapes; clients
 * (the CLI, integrations) read and write them.
 */

export const stackTemplateSchema = z
  .object({
    ...softDeletableRow(),
    generator_id: uuid().nullable().meta({ description: 'null for a system template (created by an admin)' }),
    name: z.string(),
    description: z.string().nullable(),
    version: z.number().int().meta({ description: '1 + the highest live version with the same owner and name' }),
    template_content: z.string().meta({ description: 'Tera template of the YAML' }),
    parameters_schema: z.string().meta({ description: 'JSON Schema of the parameters, as a string' }),
    checksum: z.string().meta({ description: 'hex SHA-256 of template_content' }),
  })
  .meta({ id: 'StackTemplate' });
export type StackTemplate = z.output<typeof stackTemplateSchema>;

export const newTemplateSchema = z
  .object({
    name: z.string(),
    description: z.string().nullish(),
    template_content: z.string(),
    parameters_schema: z.string(),
  })
  .meta({ id: 'CreateTemplateRequest' });
export type NewTemplate = z.input<typeof newTemplateSchema>;

/** PUT creates the next version; the name cannot change, a missing description keeps the old one. */
export const updateTemplateSchema = z
  .object({
    description: z.string().nullish(),
    template_content: z.string(),
    parameters_schema: z.string(),
  })
  .meta({ id: 'UpdateTemplateRequest' });
export type UpdateTemplate = z.input<typeof updateTemplateSchema>;

export const templateLabelSchema = z
  .object({ id: uuid(), template_id: uuid(), label: z.string(), created_at: timestamp() })
  .meta({ id: 'TemplateLabel' });
export type TemplateLabel = z.output<typeof templateLabelSchema>;

/** POST /templates/{id}/labels takes a bare JSON string. */
export const newTemplateLabelSchema = z.string().meta({ id: 'NewTemplateLabel', example: 'env=production' });

export const templateAnnotationSchema = z
  .object({ id: uuid(), template_id: uuid(), key: z.string(), value: z.string(), created_at: timestamp() })
  .meta({ id: 'TemplateAnnotation' });
export type TemplateAnnotation = z.output<typeof templateAnnotationSchema>;

export const newTemplateAnnotationSchema = z.object({ key: z.string(), value: z.string() }).meta({ id: 'AddAnnotationRequest' });
export type NewTemplateAnnotation = z.input<typeof newTemplateAnnotationSchema>;

export const templateInstantiationSchema = z
  .object({
    template_id: uuid(),
    parameters: z.unknown().meta({ description: 'Any JSON; the top-level keys of an object become the template variables' }),
  })
  .meta({ id: 'TemplateInstantiationRequest' });
export type TemplateInstantiation = z.input<typeof templateInstantiationSchema>;
