import { deploymentObjectSchema, templateInstantiationSchema } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { storeDeploymentObject, storeDepsOf, type WriteRunner } from '../deployment-objects/store.ts';
import { fetchReadableTemplate } from './access.ts';
import { instantiateErrors, renderForStack, requireStackMatch } from './instantiate.ts';
import { insertRenderedObject } from './sql/record-rendered-object.ts';

/**
 * POST /stacks/{id}/deployment-objects/from-template: a template version rendered with the
 * given parameters becomes the stack's next deployment object. The object, its provenance row
 * (`rendered_deployment_objects`) and its `deployment.created` event commit together.
 *
 * It lives with the templates, not under deployment-objects/ where its URL is: every check it
 * makes, the renderer and the provenance table are the templates'. The object itself is written by
 * deployment-objects' one create function (store.ts), the single import across resources that
 * services/api/test/layers.unit.test.ts allows.
 */
export const deploymentObjectFromTemplateRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/stacks/:id/deployment-objects/from-template',
    summary: 'Render a template into a new deployment object of the stack',
    description:
      'Checks, in order: the stack (404 `stack_not_found`, 403 `stack_not_owned`), the template (404 `template_not_found`, ' +
      '403 `template_not_accessible`), that the stack carries every label and annotation of the template (422 ' +
      '`template_stack_mismatch`), the parameters against its JSON Schema (400 `invalid_parameters`), the render (400 ' +
      '`template_render_failed`: undefined variable, runaway template, output too large) and the rendered YAML (400 ' +
      '`invalid_deployment_object`).',
    tags: ['deployment-objects', 'templates'],
    access: 'any',
    params: idParams,
    body: templateInstantiationSchema,
    responses: { 201: { description: 'The deployment object', schema: deploymentObjectSchema } },
    errors: [fetchOwnedStack, fetchReadableTemplate, ...instantiateErrors, storeDeploymentObject],
    async handler({ params, body, identity, ctx }) {
      // The checks that need no lock run first and outside any transaction (rendering is slow).
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const template = await fetchReadableTemplate(ctx.db.pool, identity, body.template_id);
      await requireStackMatch(ctx.db.pool, template, params.id);
      const yamlContent = await renderForStack(ctx, identity, template, body.parameters);
      const created = await ctx.transact(async (tx) => {
        // Again under lock: the stack and the template version must still be live (and match) at commit.
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        await fetchReadableTemplate(tx.client, identity, template.id, 'share');
        await requireStackMatch(tx.client, template, params.id);
        const inTx: WriteRunner = (write) => write(tx);
        const row = await storeDeploymentObject(storeDepsOf(ctx, inTx, inTx), {
          stackId: params.id,
          yamlContent,
          isDeletionMarker: false,
          caller: identity,
        });
        await insertRenderedObject(tx.client, {
          deploymentObjectId: row.id,
          templateId: template.id,
          templateVersion: template.version,
          parameters: body.parameters,
        });
        return row;
      });
      return json(201, created);
    },
  }),
];
