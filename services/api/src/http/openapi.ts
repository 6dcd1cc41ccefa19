import { STATUS_CODES } from 'node:http';
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { API_PREFIX } from './mount-routes.ts';
import type { AnyRoute, ResponseSpec } from './route.ts';
import { errorsByStatus } from './route-errors.ts';
import { errorResponse } from './schemas.ts';

type Parameters = NonNullable<RouteConfig['request']>['params'];

function objectOrUndefined(schema: z.ZodType | undefined): Parameters {
  return schema instanceof z.ZodObject || schema instanceof z.ZodPipe ? schema : undefined;
}

function openapiPath(expressPath: string): string {
  return API_PREFIX + expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function response(spec: ResponseSpec): ResponseConfig {
  const content: Record<string, { schema: z.ZodType }> = {};
  if (spec.schema) content['application/json'] = { schema: spec.schema };
  for (const [type, schema] of Object.entries(spec.content ?? {})) content[type] = { schema };
  return Object.keys(content).length > 0 ? { description: spec.description, content } : { description: spec.description };
}

/** One response per error status, naming every `code` the route can answer with under it. */
function errorResponseFor(status: number, codes: readonly string[]): ResponseConfig {
  const description = `${STATUS_CODES[status] ?? 'Error'}: ${codes.map((c) => `\`${c}\``).join(', ')}`;
  return { description, content: { 'application/json': { schema: errorResponse } } };
}

function requestBody(route: AnyRoute): NonNullable<RouteConfig['request']>['body'] {
  const content: Record<string, { schema: z.ZodType }> = {};
  if (route.body) content['application/json'] = { schema: route.body };
  for (const [type, schema] of Object.entries(route.requestContent ?? {})) content[type] = { schema };
  if (Object.keys(content).length === 0) return undefined;
  return { content, required: route.bodyMode !== 'optional-json' };
}

/** The route's own responses, then every error status it can produce (route-errors.ts); its own wording wins. */
function responses(route: AnyRoute): RouteConfig['responses'] {
  const out: RouteConfig['responses'] = {};
  for (const [status, spec] of Object.entries(route.responses)) out[status] = response(spec);
  for (const [status, codes] of errorsByStatus(route)) out[String(status)] ??= errorResponseFor(status, codes);
  return out;
}

/** The OpenAPI 3.1 document of the mounted routes, generated from their zod schemas. */
export function buildOpenApiDocument(routes: readonly AnyRoute[], version: string): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'pak', {
    type: 'http',
    scheme: 'bearer',
    description: 'A Brokkr PAK, `Bearer brokkr_BR…` (the bare PAK is accepted too)',
  });
  for (const route of routes) {
    registry.registerPath({
      method: route.method,
      path: openapiPath(route.path),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags ?? [],
      security: [{ pak: [] }],
      request: {
        params: objectOrUndefined(route.params),
        query: objectOrUndefined(route.query),
        body: requestBody(route),
      },
      responses: responses(route),
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Brokkr API', version, description: 'Wire-compatible with Brokkr v1 (see docs/compatibility.md).' },
    servers: [{ url: '/' }],
  });
}
