import { errorKind } from '../../errors/api-error.ts';
import { foreignKeyViolation, uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf, requireSameAgent } from '../../domain/agent-access.ts';
import {
  agentAnnotationParams,
  agentAnnotationSchema,
  agentLabelParams,
  agentLabelSchema,
  newAgentAnnotationSchema,
  newAgentLabelSchema,
} from './schemas.ts';
import { insertAnnotation } from './sql/add-annotation.ts';
import { insertLabel } from './sql/add-label.ts';
import { listAnnotations, listLabels } from './sql/queries.ts';
import { deleteAnnotation } from './sql/remove-annotation.ts';
import { deleteLabel } from './sql/remove-label.ts';

/**
 * Agent labels and annotations. Brokkr validates neither (only the 64-character columns, which
 * give 400 `invalid_input` here instead of Brokkr's 500). Every change wakes the agent: its
 * label/annotation matches, hence its target state, may differ.
 */

const tags = ['agents'];

const labelNotFound = errorKind(404, 'agent_label_not_found', 'Agent label not found');
const annotationNotFound = errorKind(404, 'agent_annotation_not_found', 'Agent annotation not found');

/** Adding a label or annotation: a duplicate (409), or an agent id that was never an agent (422). */
const insertErrors = [requireSameAgent, uniqueViolation, foreignKeyViolation];

export const agentMetadataRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/labels',
    summary: "List an agent's labels",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Labels', schema: agentLabelSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await listLabels(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/labels',
    summary: 'Add a label to an agent',
    tags,
    access: 'admin',
    params: idParams,
    body: newAgentLabelSchema,
    responses: { 201: { description: 'The label', schema: agentLabelSchema } },
    errors: insertErrors,
    async handler({ params, body, ctx }) {
      requireSameAgent(params.id, body.agent_id);
      const label = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return insertLabel(tx.client, params.id, body.label);
      });
      return json(201, label);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/agents/:id/labels/:label',
    summary: 'Remove a label from an agent',
    tags,
    access: 'admin',
    params: agentLabelParams,
    responses: { 204: { description: 'Removed' } },
    errors: [labelNotFound],
    async handler({ params, ctx }) {
      const removed = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return deleteLabel(tx.client, params.id, params.label);
      });
      if (!removed) throw labelNotFound();
      return noContent();
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/annotations',
    summary: "List an agent's annotations",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Annotations', schema: agentAnnotationSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await listAnnotations(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/annotations',
    summary: 'Add an annotation to an agent (one value per key)',
    tags,
    access: 'admin',
    params: idParams,
    body: newAgentAnnotationSchema,
    responses: { 201: { description: 'The annotation', schema: agentAnnotationSchema } },
    errors: insertErrors,
    async handler({ params, body, ctx }) {
      requireSameAgent(params.id, body.agent_id);
      const annotation = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return insertAnnotation(tx.client, params.id, body.key, body.value);
      });
      return json(201, annotation);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/agents/:id/annotations/:key',
    summary: 'Remove an annotation from an agent',
    tags,
    access: 'admin',
    params: agentAnnotationParams,
    responses: { 204: { description: 'Removed' } },
    errors: [annotationNotFound],
    async handler({ params, ctx }) {
      const removed = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return deleteAnnotation(tx.client, params.id, params.key);
      });
      if (!removed) throw annotationNotFound();
      return noContent();
    },
  }),
];
