import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { pakSummarySchema } from './schemas.ts';
import { listPakSummaries } from './sql/queries.ts';

export const pakRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/paks',
    summary: 'Named PAKs (tenants): one per live, non-system generator',
    tags: ['auth'],
    access: 'admin',
    responses: { 200: { description: 'Tenants', schema: pakSummarySchema.array() } },
    handler: async ({ ctx }) => json(200, await listPakSummaries(ctx.db.pool)),
  }),
];
