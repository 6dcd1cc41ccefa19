import { newTemplateAnnotationSchema, newTemplateLabelSchema, templateAnnotationSchema, templateLabelSchema } from '@brokkr/contracts';
import { errorKind } from '../../errors/api-error.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { labelProblem } from '../stacks/label-routes.ts';
import { fetchModifiableTemplate, fetchReadableTemplate } from './access.ts';
import { templateAnnotationParams, templateLabelParams } from './schemas.ts';
import { insertTemplateAnnotation } from './sql/add-annotation.ts';
import { insertTemplateLabel } from './sql/add-label.ts';
import { listTemplateAnnotations, listTemplateLabels } from './sql/queries.ts';
import { deleteTemplateAnnotation } from './sql/remove-annotation.ts';
import { deleteTemplateLabel } from './sql/remove-label.ts';

/**
 * A template version's labels and annotations: the stacks it may be instantiated into must
 * carry all of them (AND). They belong to one version: a PUT starts the next one without any.
 */

const tags = ['templates'];
const invalidLabel = errorKind(400, 'invalid_label', 'Invalid label');
const invalidAnnotation = errorKind(400, 'invalid_annotation', 'Invalid annotation');
const labelNotFound = errorKind(404, 'template_label_not_found', 'Label not found on this template');
const annotationNotFound = errorKind(404, 'template_annotation_not_found', 'Annotation not found on this template');

/** Brokkr validates template annotation keys and values like labels: not blank, ≤ 64 characters, no whitespace. */
function annotationProblem(key: string, value: string): string | undefined {
  const keyProblem = labelProblem(key);
  if (keyProblem) return keyProblem.replace('Label', 'Annotation key');
  const valueProblem = labelProblem(value);
  return valueProblem?.replace('Label', 'Annotation value');
}

export const templateMetadataRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/templates/:id/labels',
    summary: "List a template version's labels",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Labels', schema: templateLabelSchema.array() } },
    errors: [fetchReadableTemplate],
    async handler({ params, identity, ctx }) {
      await fetchReadableTemplate(ctx.db.pool, identity, params.id);
      return json(200, await listTemplateLabels(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/templates/:id/labels',
    summary: 'Add a label to a template version (the body is a bare JSON string)',
    tags,
    access: 'any',
    params: idParams,
    body: newTemplateLabelSchema,
    responses: { 201: { description: 'The label', schema: templateLabelSchema } },
    errors: [fetchModifiableTemplate, invalidLabel, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      const label = await ctx.transact(async (tx) => {
        await fetchModifiableTemplate(tx.client, identity, params.id, 'share');
        const problem = labelProblem(body);
        if (problem) throw invalidLabel.with(problem);
        return insertTemplateLabel(tx.client, params.id, body);
      });
      return json(201, label);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/templates/:id/labels/:label',
    summary: 'Remove a label from a template version',
    tags,
    access: 'any',
    params: templateLabelParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchModifiableTemplate, labelNotFound],
    async handler({ params, identity, ctx }) {
      await fetchModifiableTemplate(ctx.db.pool, identity, params.id);
      if (!(await deleteTemplateLabel(ctx.db.pool, params.id, params.label))) throw labelNotFound();
      return noContent();
    },
  }),

  defineRoute({
    method: 'get',
    path: '/templates/:id/annotations',
    summary: "List a template version's annotations",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Annotations', schema: templateAnnotationSchema.array() } },
    errors: [fetchReadableTemplate],
    async handler({ params, identity, ctx }) {
      await fetchReadableTemplate(ctx.db.pool, identity, params.id);
      return json(200, await listTemplateAnnotations(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/templates/:id/annotations',
    summary: 'Add an annotation (key, value) to a template version',
    tags,
    access: 'any',
    params: idParams,
    body: newTemplateAnnotationSchema,
    responses: { 201: { description: 'The annotation', schema: templateAnnotationSchema } },
    errors: [fetchModifiableTemplate, invalidAnnotation, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      const annotation = await ctx.transact(async (tx) => {
        await fetchModifiableTemplate(tx.client, identity, params.id, 'share');
        const problem = annotationProblem(body.key, body.value);
        if (problem) throw invalidAnnotation.with(problem);
        return insertTemplateAnnotation(tx.client, params.id, body.key, body.value);
      });
      return json(201, annotation);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/templates/:id/annotations/:key',
    summary: 'Remove an annotation from a template version',
    tags,
    access: 'any',
    params: templateAnnotationParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchModifiableTemplate, annotationNotFound],
    async handler({ params, identity, ctx }) {
      await fetchModifiableTemplate(ctx.db.pool, identity, params.id);
      if (!(await deleteTemplateAnnotation(ctx.db.pool, params.id, params.key))) throw annotationNotFound();
      return noContent();
    },
  }),
];
