import { tenantOf, type Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../errors/api-error.ts';
import { invalidDeploymentObject } from '../../errors/catalogue.ts';
import { yamlValidatorBusy } from '../../http/deployment-object-input.ts';
import { YamlValidatorBusy } from '../../yaml/index.ts';
import { runTemplateJob, templateRendererBusy } from './rendering.ts';
import { templateStackMismatch } from './sql/queries.ts';
import type { Queryable } from '@brokkr/db';
import type { TemplateRow } from './sql/template-row.ts';

export const templateStackMismatchError = errorKind(
  422,
  'template_stack_mismatch',
  'The stack lacks labels or annotations the template requires',
);
export const invalidParameters = errorKind(400, 'invalid_parameters', 'Invalid parameters');
export const templateRenderFailed = errorKind(400, 'template_render_failed', 'Template rendering failed');

export const instantiateErrors = [
  templateStackMismatchError,
  invalidParameters,
  templateRenderFailed,
  invalidDeploymentObject,
  yamlValidatorBusy,
  templateRendererBusy,
];

/** 422 `template_stack_mismatch` listing what the stack lacks, unless it carries everything the template requires. */
export async function requireStackMatch(db: Queryable, template: TemplateRow, stackId: string): Promise<void> {
  const mismatch = await templateStackMismatch(db, template.id, stackId);
  if (mismatch.missing_labels.length > 0 || mismatch.missing_annotations.length > 0)
    throw templateStackMismatchError.with('Template labels do not match stack', { ...mismatch });
}

/**
 * Validates the parameters against the template's schema and renders it (sandboxed renderer
 * processes, with a deadline and an output cap: the rendered YAML may not be larger than a deployment object a
 * client could send), then checks the result as any deployment object's YAML is checked.
 * Brokkr stores whatever Tera produced; here YAML that is not a valid deployment object is a
 * 400 `invalid_deployment_object` (docs/compatibility.md).
 */
export async function renderForStack(ctx: ApiContext, identity: Identity, template: TemplateRow, parameters: unknown): Promise<string> {
  const limit = ctx.settings.http.bodyLimitBytes;
  const result = await runTemplateJob(ctx, identity, {
    kind: 'render',
    templateContent: template.template_content,
    parametersSchema: template.parameters_schema,
    parameters,
    maxOutputChars: limit,
  });
  if (!result.ok && result.code === 'invalid_parameters')
    throw invalidParameters.with('Invalid parameters', { validation_errors: result.validationErrors ?? [] });
  if (!result.ok) throw templateRenderFailed.with(result.message);
  const yaml = result.output ?? '';
  if (Buffer.byteLength(yaml, 'utf8') > limit)
    throw templateRenderFailed.with(`Template rendering failed: the rendered output exceeds the limit of ${limit} bytes`);
  if (yaml.trim() === '') throw invalidDeploymentObject.with('Invalid deployment object: the rendered template is blank');
  const verdict = await ctx.yaml.validate(yaml, { isDeletionMarker: false }, tenantOf(identity)).catch((err: unknown) => {
    if (err instanceof YamlValidatorBusy) throw yamlValidatorBusy();
    throw err;
  });
  if (!verdict.ok)
    throw invalidDeploymentObject.with(`Invalid deployment object: the rendered template is not valid YAML: ${verdict.reason}`);
  return yaml;
}
