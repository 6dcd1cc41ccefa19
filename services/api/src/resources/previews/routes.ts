import { tenantOf } from '../../auth/identity.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { readDeploymentObjectInput, yamlValidatorBusy } from '../../http/deployment-object-input.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { agentsForStack } from '../../domain/agents-for-stacks.ts';
import { fetchReadablePreview, invalidPreview } from './access.ts';
import {
  newPreviewQuery,
  newPreviewSchema,
  previewSchema,
  previewSummarySchema,
  STACK_PREVIEWS_LIMIT,
  yamlRequestContent,
} from './schemas.ts';
import { insertPreview } from './sql/create-preview.ts';
import { activeAgents, listPreviewAgents, listStackPreviews } from './sql/queries.ts';
import { previewCounts, previewSummary, previewView } from './view.ts';

const tags = ['previews'];

/** Who proposed it, as the preview shows it. */
const creatorOf = (identity: { admin: boolean; generator: string | null }) =>
  identity.admin ? 'admin' : `generator:${identity.generator}`;

/** The owner's side of the fleet-wide diff preview: propose, read one, list a stack's. */
export const previewRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/stacks/:id/previews',
    summary: 'Preview proposed YAML on every cluster the stack targets, without publishing it',
    description:
      'Takes the bodies POST /stacks/{id}/deployment-objects takes (JSON envelope, or raw YAML with a YAML content type) and ' +
      'validates them the same way, but stores no deployment object: nothing is served as target state. Every ACTIVE agent ' +
      'the stack targets now is asked (woken at once) to run a server-side dry-run apply against its cluster and report ' +
      'per object created/changed/unchanged/pruned with a compact field diff and any admission or schema error. ' +
      'Read the aggregate with GET /previews/{id}; agents that have not reported within 15 minutes show `expired`.',
    tags,
    access: 'any',
    params: idParams,
    query: newPreviewQuery,
    body: newPreviewSchema,
    bodyMode: 'raw',
    requestContent: yamlRequestContent,
    responses: { 201: { description: 'The preview (every targeted agent pending)', schema: previewSchema } },
    errors: [fetchOwnedStack, invalidPreview, yamlValidatorBusy],
    async handler({ params, query, raw, identity, ctx, clientIp, userAgent }) {
      // Parsed before the transaction, reported after the 404/403 checks (as deployment objects do).
      const parsed = await readDeploymentObjectInput(raw, query.deletion_marker, ctx.yaml, tenantOf(identity));
      if (!parsed.ok) {
        await fetchOwnedStack(ctx.db.pool, identity, params.id);
        throw invalidPreview.with(`Invalid preview: ${parsed.reason}`, parsed.details);
      }
      // A preview shows every agent the same proposed YAML; one rendered per agent is not previewed yet (docs/renders.md).
      if (parsed.input.source)
        throw invalidPreview.with('Invalid preview: a chart or an overlay cannot be previewed yet; preview its rendered YAML');
      const preview = await ctx.transact(async (tx) => {
        const stack = await fetchOwnedStack(tx.client, identity, params.id, 'share');
        // Inactive agents would never answer: only ACTIVE ones are asked.
        const agentIds = await activeAgents(tx.client, await agentsForStack(tx.client, stack.id));
        const row = await insertPreview(tx.client, {
          stackId: stack.id,
          yamlContent: parsed.input.yamlContent,
          isDeletionMarker: parsed.input.isDeletionMarker,
          createdBy: creatorOf(identity),
          agentIds,
        });
        tx.notifyAgents(agentIds);
        tx.emit('preview.created', { preview_id: row.id, stack_id: row.stack_id, agents: agentIds });
        // Nobody to ask: the preview is complete as it stands.
        if (agentIds.length === 0) tx.emit('preview.completed', { preview_id: row.id, stack_id: row.stack_id, counts: previewCounts([]) });
        return row;
      });
      const agents = await listPreviewAgents(ctx.db.pool, preview.id);
      await ctx.audit({
        actor: identity,
        action: 'preview.created',
        resourceType: 'stack',
        resourceId: preview.stack_id,
        details: { preview_id: preview.id, agents: agents.length, is_deletion_marker: preview.is_deletion_marker },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, previewView(preview, agents));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/previews',
    summary: "A stack's previews, newest first (at most 50), with per-status agent counts",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Previews', schema: previewSummarySchema.array() } },
    errors: [fetchOwnedStack],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const rows = await listStackPreviews(ctx.db.pool, params.id, STACK_PREVIEWS_LIMIT);
      return json(
        200,
        rows.map((r) => previewSummary(r, r.statuses ?? [])),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/previews/:id',
    summary: 'A preview aggregated per agent: status, and per object the action, field diff and error',
    description: '`status` is `completed` once every targeted agent reported (or the preview expired).',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The preview', schema: previewSchema } },
    errors: [fetchReadablePreview],
    async handler({ params, identity, ctx }) {
      const preview = await fetchReadablePreview(ctx.db.pool, identity, params.id);
      return json(200, previewView(preview, await listPreviewAgents(ctx.db.pool, preview.id)));
    },
  }),
];
