import { z } from 'zod';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';

export const identitySchema = z
  .object({
    admin: z.boolean(),
    agent: z.guid().nullable(),
    generator: z.guid().nullable(),
    readonly: z.boolean(),
  })
  .meta({ id: 'AuthPayload' });

export const authRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/auth/pak',
    summary: 'Identify the caller of a PAK',
    tags: ['auth'],
    access: 'any',
    responses: { 200: { description: 'The identity behind the PAK', schema: identitySchema } },
    handler: ({ identity }) => json(200, identity),
  }),
];
