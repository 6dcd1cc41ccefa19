import { deploymentObjectSchema } from '@brokkr/contracts';
import { tenantOf } from '../../auth/identity.ts';
import { writeOnce } from '../../events/write-once.ts';
import { deploymentObjectNotFound, invalidDeploymentObject, stackNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute, type Reply } from '../../http/route.ts';
import { listPage, listPageQuery, pageReply, readWindow } from '../../http/list-page.ts';
import { idParams } from '../../http/schemas.ts';
import { acceptsYaml } from '../../yaml/index.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { requireObjectReader } from './access.ts';
import { readDeploymentObjectInput, yamlValidatorBusy } from '../../http/deployment-object-input.ts';
import {
  newDeploymentObjectQuery,
  newDeploymentObjectSchema,
  yamlRequestContent,
  yamlResponseContent,
} from '../../http/deployment-object-schemas.ts';
import { findDeploymentObject, listStackDeploymentObjects } from './sql/queries.ts';
import { fetchObjectSource, sourceErrors } from './source-input.ts';
import { storeDeploymentObject, storeDepsOf } from './store.ts';

const tags = ['deployment-objects'];
export const deploymentObjectRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/deployment-objects',
    summary: "List a stack's live deployment objects, newest first",
    tags,
    access: 'any',
    params: idParams,
    query: listPageQuery,
    responses: {
      200: {
        description: 'Deployment objects (sequence_id DESC); `limit`/`offset` page it, `Link` rel=next while more follow',
        schema: deploymentObjectSchema.array(),
      },
    },
    errors: [fetchOwnedStack],
    async handler({ params, query, identity, ctx, req }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const page = listPage(query, ctx.settings.limits.listMaxItems);
      return pageReply(req, page, await listStackDeploymentObjects(ctx.db.pool, params.id, readWindow(page)));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks/:id/deployment-objects',
    summary: 'Add a deployment object to a stack (JSON envelope, or a raw YAML body)',
    description:
      'With `Content-Type` application/yaml, text/yaml or application/x-yaml the body is the YAML itself and ' +
      '`?deletion_marker=true` marks it as a deletion marker; any other content type is read as the JSON envelope.',
    tags,
    access: 'any',
    params: idParams,
    query: newDeploymentObjectQuery,
    body: newDeploymentObjectSchema,
    bodyMode: 'raw',
    requestContent: yamlRequestContent,
    responses: { 201: { description: 'The deployment object', schema: deploymentObjectSchema } },
    errors: [fetchOwnedStack, storeDeploymentObject, invalidDeploymentObject, yamlValidatorBusy, ...Object.values(sourceErrors)],
    async handler({ params, query, raw, identity, ctx }) {
      // Parsed before the transaction (no connection held while parsing) but reported after
      // the 404/403 checks, which come first.
      const parsed = await readDeploymentObjectInput(raw, query.deletion_marker, ctx.yaml, tenantOf(identity));
      if (!parsed.ok) {
        await fetchOwnedStack(ctx.db.pool, identity, params.id);
        throw invalidDeploymentObject.with(`Invalid deployment object: ${parsed.reason}`, parsed.details);
      }
      const deps = storeDepsOf(ctx, (write) => writeOnce(ctx, write));
      const { source, ...input } = parsed.input;
      if (source) {
        // The caller must own the stack before the hub fetches anything on its behalf.
        await fetchOwnedStack(ctx.db.pool, identity, params.id);
        const fetched = await fetchObjectSource(ctx.db.pool, ctx.settings.sources, source);
        return json(201, await storeDeploymentObject(deps, { stackId: params.id, ...input, caller: identity, source: fetched }));
      }
      // One statement: access check, row, outbox row and wake list (store.ts).
      return json(201, await storeDeploymentObject(deps, { stackId: params.id, ...input, caller: identity }));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/deployment-objects/:id',
    summary: 'Get a deployment object (JSON, or the stored YAML when Accept asks for YAML)',
    tags,
    access: 'any',
    params: idParams,
    responses: {
      200: { description: 'The deployment object', schema: deploymentObjectSchema, content: yamlResponseContent },
    },
    errors: [deploymentObjectNotFound, requireObjectReader, stackNotFound],
    async handler({ params, identity, ctx, req }): Promise<Reply> {
      const found = await findDeploymentObject(ctx.db.pool, params.id);
      if (!found) throw deploymentObjectNotFound();
      await requireObjectReader(ctx.db.pool, identity, found);
      if (found.stackDeleted) throw stackNotFound();
      if (!acceptsYaml(req.headers.accept)) return json(200, found.object);
      // A Buffer, so express adds no charset parameter: the bytes are exactly what was stored.
      return { status: 200, body: Buffer.from(found.object.yaml_content, 'utf8'), contentType: 'application/yaml' };
    },
  }),
];
