import { errorKind } from '../../errors/api-error.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack, requireStackMetadataReader, stackIdMismatch } from '../../domain/stack-access.ts';
import { newStackAnnotationSchema, stackAnnotationParams, stackAnnotationSchema } from './schemas.ts';
import { insertStackAnnotation } from './sql/add-annotation.ts';
import { listStackAnnotations } from './sql/queries.ts';
import { deleteStackAnnotation } from './sql/remove-annotation.ts';
import { wakeStackAgents } from './wake-agents.ts';

const tags = ['stacks'];
const MAX_ANNOTATION_LENGTH = 64;
const invalidAnnotation = errorKind(400, 'invalid_annotation', 'Invalid annotation');
const annotationNotFound = errorKind(404, 'stack_annotation_not_found', 'Annotation not found on this stack');

/**
 * Brokkr validates nothing here and answers an over-long key or value with a 500 from the
 * varchar(64) columns; we answer 400 `invalid_annotation` (docs/compatibility.md).
 */
function annotationProblem(key: string, value: string): string | undefined {
  for (const [name, text] of [
    ['key', key],
    ['value', value],
  ] as const) {
    if (text.trim() === '') return `Annotation ${name} cannot be empty`;
    if ([...text].length > MAX_ANNOTATION_LENGTH) return `Annotation ${name} cannot exceed ${MAX_ANNOTATION_LENGTH} characters`;
  }
  return undefined;
}

export const stackAnnotationRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/annotations',
    summary: "List a stack's annotations (admin, owning generator, or an agent targeting the stack)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Annotations', schema: stackAnnotationSchema.array() } },
    errors: [requireStackMetadataReader],
    async handler({ params, identity, ctx }) {
      await requireStackMetadataReader(ctx.db.pool, identity, params.id);
      return json(200, await listStackAnnotations(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks/:id/annotations',
    summary: 'Add an annotation to a stack (one value per key)',
    tags,
    access: 'any',
    params: idParams,
    body: newStackAnnotationSchema,
    responses: { 201: { description: 'The annotation', schema: stackAnnotationSchema } },
    errors: [fetchOwnedStack, stackIdMismatch, invalidAnnotation, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      const annotation = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        if (body.stack_id !== params.id) throw stackIdMismatch();
        const problem = annotationProblem(body.key, body.value);
        if (problem) throw invalidAnnotation.with(problem);
        const row = await insertStackAnnotation(tx.client, params.id, body.key, body.value);
        await wakeStackAgents(tx, params.id);
        return row;
      });
      return json(201, annotation);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/annotations/:key',
    summary: 'Remove an annotation from a stack',
    tags,
    access: 'any',
    params: stackAnnotationParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchOwnedStack, annotationNotFound],
    async handler({ params, identity, ctx }) {
      await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        const value = await deleteStackAnnotation(tx.client, params.id, params.key);
        if (value === undefined) throw annotationNotFound();
        await wakeStackAgents(tx, params.id, { annotations: [[params.key, value]] });
      });
      return noContent();
    },
  }),
];
