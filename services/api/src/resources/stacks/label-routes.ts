import { errorKind } from '../../errors/api-error.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack, requireStackMetadataReader } from '../../domain/stack-access.ts';
import { newStackLabelSchema, stackLabelParams, stackLabelSchema } from './schemas.ts';
import { insertStackLabel } from './sql/add-label.ts';
import { listStackLabels } from './sql/queries.ts';
import { deleteStackLabel } from './sql/remove-label.ts';
import { wakeStackAgents } from './wake-agents.ts';

const tags = ['stacks'];
export const MAX_LABEL_LENGTH = 64;
const invalidLabel = errorKind(400, 'invalid_label', 'Invalid label');
const labelNotFound = errorKind(404, 'stack_label_not_found', 'Label not found on this stack');

/** Brokkr's stack-label rule: not blank, at most 64 characters, no whitespace anywhere. */
export function labelProblem(label: string): string | undefined {
  if (label.trim() === '') return 'Label cannot be empty';
  if ([...label].length > MAX_LABEL_LENGTH) return `Label cannot exceed ${MAX_LABEL_LENGTH} characters`;
  if (/\s/u.test(label)) return 'Label cannot contain whitespace';
  return undefined;
}

export const stackLabelRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/labels',
    summary: "List a stack's labels (admin, owning generator, or an agent targeting the stack)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Labels', schema: stackLabelSchema.array() } },
    errors: [requireStackMetadataReader],
    async handler({ params, identity, ctx }) {
      await requireStackMetadataReader(ctx.db.pool, identity, params.id);
      return json(200, await listStackLabels(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks/:id/labels',
    summary: 'Add a label to a stack (the body is a bare JSON string)',
    tags,
    access: 'any',
    params: idParams,
    body: newStackLabelSchema,
    responses: { 201: { description: 'The label', schema: stackLabelSchema } },
    errors: [fetchOwnedStack, invalidLabel, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      const label = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        const problem = labelProblem(body);
        if (problem) throw invalidLabel.with(problem);
        const row = await insertStackLabel(tx.client, params.id, body);
        await wakeStackAgents(tx, params.id);
        return row;
      });
      return json(201, label);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/labels/:label',
    summary: 'Remove a label from a stack',
    tags,
    access: 'any',
    params: stackLabelParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchOwnedStack, labelNotFound],
    async handler({ params, identity, ctx }) {
      await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        if (!(await deleteStackLabel(tx.client, params.id, params.label))) throw labelNotFound();
        await wakeStackAgents(tx, params.id, { labels: [params.label] });
      });
      return noContent();
    },
  }),
];
