import { authPayloadSchema } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';

export const authRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/auth/pak',
    summary: 'Identify the caller of a PAK',
    tags: ['auth'],
    access: 'any',
    responses: { 200: { description: 'The identity behind the PAK', schema: authPayloadSchema } },
    handler: ({ identity }) => json(200, identity),
  }),
];
