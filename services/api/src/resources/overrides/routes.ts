import {
  grantRefused,
  invalidOverride,
  overrideExists,
  overrideNotFound,
  renderFailed,
  rendererBusy,
  rendererUnavailable,
  stackLayersChanged,
} from '../../errors/catalogue.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { changeLayers } from '../../rendering/layer-change.ts';
import { proposeAdded, proposeRemoved, proposeReplaced } from '../../rendering/propose-layers.ts';
import { newOverrideSchema, overrideParams, overrideSchema, overrideUpdateSchema } from './schemas.ts';
import { deleteOverride, insertOverride, listOverrides, updateOverride } from '../../rendering/sql/overrides.ts';
import { overrideJson } from './serialize.ts';

/**
 * A stack's override layers (docs/renders.md): per-cluster values for its charts and patches for
 * any of its YAML, each layer for the agents its selector picks. The admin or the owning generator
 * reads and changes them. A change is rendered for every agent of the stack before anything is
 * stored: one that some agent cannot be rendered with is refused (422 naming each agent).
 */

const tags = ['overrides'];
const writeErrors = [
  fetchOwnedStack,
  invalidOverride,
  renderFailed,
  rendererUnavailable,
  rendererBusy,
  grantRefused,
  stackLayersChanged,
] as const;

export const overrideRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/overrides',
    summary: "List a stack's override layers, in the order they apply",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The layers', schema: overrideSchema.array() } },
    errors: [fetchOwnedStack],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      return json(200, (await listOverrides(ctx.db.pool, params.id)).map(overrideJson));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/overrides/:name',
    summary: 'One override layer',
    tags,
    access: 'any',
    params: overrideParams,
    responses: { 200: { description: 'The layer', schema: overrideSchema } },
    errors: [fetchOwnedStack, overrideNotFound],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const layer = (await listOverrides(ctx.db.pool, params.id)).find((l) => l.name === params.name);
      if (!layer) throw overrideNotFound();
      return json(200, overrideJson(layer));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks/:id/overrides',
    summary: 'Add an override layer (rendered for every agent of the stack first)',
    description:
      "Values are merged over a chart's values and patches (JSON merge patch, RFC 6902) change the rendered objects, for the agents the selector picks. " +
      'Strings may refer to the agent: `{{ agent.name }}`, `{{ agent.annotations.region }}`, `{{ agent.labels }}`, `{{ agent.facts.kubernetes_version }}`, ' +
      'optionally `| default: "x"`. A reference that some agent cannot resolve, or a render that fails, refuses the layer (422 `render_failed` naming each agent).',
    tags,
    access: 'any',
    params: idParams,
    body: newOverrideSchema,
    responses: { 201: { description: 'The layer', schema: overrideSchema } },
    errors: [...writeErrors, overrideExists],
    async handler({ params, body, identity, ctx }) {
      const stack = await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const row = await changeLayers(ctx, stack, {
        propose: (current) => proposeAdded(current, body),
        persist: (tx) => insertOverride(tx.client, stack.id, body),
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.override_created',
        resourceType: 'stack',
        resourceId: stack.id,
        details: { name: row.name },
      });
      return json(201, overrideJson(row));
    },
  }),

  defineRoute({
    method: 'put',
    path: '/stacks/:id/overrides/:name',
    summary: 'Replace an override layer (rendered for every agent of the stack first)',
    tags,
    access: 'any',
    params: overrideParams,
    body: overrideUpdateSchema,
    responses: { 200: { description: 'The layer', schema: overrideSchema } },
    errors: [...writeErrors, overrideNotFound, overrideExists],
    async handler({ params, body, identity, ctx }) {
      const stack = await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const layer = { ...body, name: body.name ?? params.name };
      const row = await changeLayers(ctx, stack, {
        propose: (current) => proposeReplaced(current, params.name, layer),
        persist: async (tx) => (await updateOverride(tx.client, stack.id, params.name, layer))!,
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.override_updated',
        resourceType: 'stack',
        resourceId: stack.id,
        details: { name: row.name },
      });
      return json(200, overrideJson(row));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/overrides/:name',
    summary: 'Remove an override layer (the agents it applied to are rendered again without it)',
    tags,
    access: 'any',
    params: overrideParams,
    responses: { 204: { description: 'Removed' } },
    errors: [...writeErrors, overrideNotFound],
    async handler({ params, identity, ctx }) {
      const stack = await fetchOwnedStack(ctx.db.pool, identity, params.id);
      await changeLayers(ctx, stack, {
        propose: (current) => proposeRemoved(current, params.name),
        persist: (tx) => deleteOverride(tx.client, stack.id, params.name),
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.override_deleted',
        resourceType: 'stack',
        resourceId: stack.id,
        details: { name: params.name },
      });
      return noContent();
    },
  }),
];
