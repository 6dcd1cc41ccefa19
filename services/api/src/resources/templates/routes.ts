import { newTemplateSchema, stackTemplateSchema, updateTemplateSchema } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';
import type { Identity } from '../../auth/identity.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { listPage, listPageQuery, pageReply, readWindow } from '../../http/list-page.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchModifiableTemplate, fetchReadableTemplate, requireTemplateUser, templateNotFound } from './access.ts';
import { checkTemplateText, templateCheckErrors } from './checks.ts';
import { insertTemplateVersion, type NewTemplateVersion } from './sql/create-template-version.ts';
import { softDeleteTemplate } from './sql/delete-template.ts';
import { listLiveTemplates } from './sql/queries.ts';
import type { TemplateRow } from './sql/template-row.ts';

const tags = ['templates'];

interface AuditInfo {
  identity: Identity;
  clientIp: string | null;
  userAgent: string | null;
}

/** `template.created` / `template.updated` carry {name, version}; `template.deleted` {name}. */
async function auditTemplate(ctx: ApiContext, who: AuditInfo, action: string, template: TemplateRow) {
  const withVersion = action !== 'template.deleted';
  await ctx.audit({
    actor: who.identity,
    action,
    resourceType: 'template',
    resourceId: template.id,
    details: withVersion ? { name: template.name, version: template.version } : { name: template.name },
    ipAddress: who.clientIp,
    userAgent: who.userAgent,
  });
}

async function storeVersion(ctx: ApiContext, version: NewTemplateVersion): Promise<TemplateRow> {
  return ctx.transact((tx) => insertTemplateVersion(tx.client, version));
}

export const templateRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/templates',
    summary: 'List templates: every live version (admin), or the system templates and your own (generator)',
    tags,
    access: 'any',
    query: listPageQuery,
    responses: {
      200: {
        description: 'One entry per version; `limit`/`offset` page it, `Link` rel=next while more follow',
        schema: stackTemplateSchema.array(),
      },
    },
    errors: [requireTemplateUser],
    async handler({ query, identity, ctx, req }) {
      requireTemplateUser(identity);
      const page = listPage(query, ctx.settings.limits.listMaxItems);
      return pageReply(req, page, await listLiveTemplates(ctx.db.pool, identity.admin ? null : identity.generator, readWindow(page)));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/templates',
    summary: 'Create a template (admin: a system template; generator: its own). Reusing a name adds the next version',
    tags,
    access: 'any',
    body: newTemplateSchema,
    responses: { 201: { description: 'The new template version', schema: stackTemplateSchema } },
    errors: [requireTemplateUser, ...templateCheckErrors],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      requireTemplateUser(identity);
      const fields = { templateContent: body.template_content, parametersSchema: body.parameters_schema };
      await checkTemplateText(ctx, identity, { name: body.name, description: body.description, ...fields });
      const generatorId = identity.admin ? null : identity.generator;
      const created = await storeVersion(ctx, { generatorId, name: body.name, description: body.description ?? null, ...fields });
      await auditTemplate(ctx, { identity, clientIp, userAgent }, 'template.created', created);
      return json(201, created);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/templates/:id',
    summary: 'Get one template version',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The template version', schema: stackTemplateSchema } },
    errors: [fetchReadableTemplate],
    async handler({ params, identity, ctx }) {
      return json(200, await fetchReadableTemplate(ctx.db.pool, identity, params.id));
    },
  }),

  defineRoute({
    method: 'put',
    path: '/templates/:id',
    summary: 'Create the next version of a template (a new id; the old version is kept; labels and annotations are not copied)',
    tags,
    access: 'any',
    params: idParams,
    body: updateTemplateSchema,
    responses: { 200: { description: 'The new template version', schema: stackTemplateSchema } },
    errors: [fetchModifiableTemplate, ...templateCheckErrors],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const existing = await fetchModifiableTemplate(ctx.db.pool, identity, params.id);
      const fields = { templateContent: body.template_content, parametersSchema: body.parameters_schema };
      await checkTemplateText(ctx, identity, { description: body.description, ...fields });
      const created = await ctx.transact(async (tx) => {
        // Still live (a concurrent DELETE of this version wins).
        await fetchModifiableTemplate(tx.client, identity, params.id, 'share');
        const description = body.description ?? existing.description;
        return insertTemplateVersion(tx.client, { generatorId: existing.generator_id, name: existing.name, description, ...fields });
      });
      await auditTemplate(ctx, { identity, clientIp, userAgent }, 'template.updated', created);
      return json(200, created);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/templates/:id',
    summary: 'Delete one template version (soft delete; objects rendered from it are kept)',
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [fetchModifiableTemplate],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const template = await fetchModifiableTemplate(ctx.db.pool, identity, params.id);
      if (!(await softDeleteTemplate(ctx.db.pool, params.id))) throw templateNotFound();
      await auditTemplate(ctx, { identity, clientIp, userAgent }, 'template.deleted', template);
      return noContent();
    },
  }),
];
