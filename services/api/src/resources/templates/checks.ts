import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../errors/api-error.ts';
import { runTemplateJob, templateRendererBusy } from './rendering.ts';

export const invalidTemplate = errorKind(400, 'invalid_template', 'Invalid template');
export const invalidTemplateSyntax = errorKind(400, 'invalid_template_syntax', 'Invalid template syntax');
export const invalidParametersSchema = errorKind(400, 'invalid_parameters_schema', 'Invalid parameters schema');

/** Kinds a template check can raise (for the routes' `errors`). */
export const templateCheckErrors = [invalidTemplate, invalidTemplateSyntax, invalidParametersSchema, templateRendererBusy];

interface TemplateText {
  name?: string;
  description?: string | null;
  templateContent: string;
  parametersSchema: string;
}

/**
 * What a new version must pass before it is stored: a name, description and content that are
 * not blank (Brokkr answers those with a 500), Tera syntax that parses with known filters,
 * tests and functions, and a JSON Schema that compiles. The checks run in the sandboxed
 * renderer processes: they read client text.
 */
export async function checkTemplateText(ctx: ApiContext, identity: Identity, t: TemplateText): Promise<void> {
  if (t.name !== undefined && t.name.trim() === '') throw invalidTemplate.with('Template name cannot be empty');
  if (t.description !== undefined && t.description !== null && t.description.trim() === '')
    throw invalidTemplate.with('Template description cannot be empty (omit it instead)');
  if (t.templateContent.trim() === '') throw invalidTemplate.with('Template content cannot be empty');
  const result = await runTemplateJob(ctx, identity, {
    kind: 'check',
    templateContent: t.templateContent,
    parametersSchema: t.parametersSchema,
  });
  if (result.ok) return;
  if (result.code === 'invalid_parameters_schema') throw invalidParametersSchema.with(result.message);
  throw invalidTemplateSyntax.with(result.code === 'invalid_template_syntax' ? `Invalid Tera syntax: ${result.message}` : result.message);
}
