import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildOpenApiDocument } from '../src/http/openapi.ts';
import type { AnyRoute } from '../src/http/route.ts';
import { routeErrors, takesBody } from '../src/http/route-errors.ts';
import { allRoutes } from '../src/resources/index.ts';

/**
 * The OpenAPI document lists every status an operation can answer with:
 * the success, the statuses its declaration implies, and its own errors, each with the shared
 * ErrorResponse schema and the codes in the description. The live counterpart is
 * openapi-error-samples.test.ts; the fuzzer is openapi-fuzz.test.ts.
 */

interface Operation {
  responses: Record<string, { description: string; content?: Record<string, { schema: { $ref?: string } }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const doc = buildOpenApiDocument(allRoutes, 'test') as Document;
const templateOf = (route: AnyRoute) => `/api/v1${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
const label = (route: AnyRoute) => `${route.method.toUpperCase()} ${templateOf(route)}`;

function operationOf(route: AnyRoute): Operation {
  const operation = doc.paths[templateOf(route)]?.[route.method];
  if (!operation) throw new Error(`${label(route)} is missing from the document`);
  return operation;
}

/** Asserts `status` is documented for the route with the ErrorResponse schema and `code` named. */
function expectError(route: AnyRoute, status: number, code: string): void {
  const response = operationOf(route).responses[String(status)];
  expect(response, `${label(route)} does not document ${status}`).to.exist;
  expect(response!.content?.['application/json']?.schema.$ref, `${label(route)} ${status} schema`).to.equal(
    '#/components/schemas/ErrorResponse',
  );
  expect(response!.description, `${label(route)} ${status} description`).to.include(`\`${code}\``);
}

const find = (method: string, template: string): AnyRoute => {
  const route = allRoutes.find((r) => r.method === method && templateOf(r) === `/api/v1${template}`);
  if (!route) throw new Error(`no route ${method} ${template}`);
  return route;
};

describe('OpenAPI document: responses of every operation', () => {
  it('has one operation per route', () => {
    const operations = Object.values(doc.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    expect(operations).to.equal(allRoutes.length);
  });

  it('documents a success status and never a catch-all `default` response', () => {
    for (const route of allRoutes) {
      const statuses = Object.keys(operationOf(route).responses);
      expect(
        statuses.some((s) => /^[23]\d\d$/.test(s)),
        `${label(route)} has no success response`,
      ).to.equal(true);
      expect(statuses, label(route)).to.not.include('default');
    }
  });

  it('documents 401 unauthorized and 503 service_unavailable everywhere, 403 admin_required on admin routes', () => {
    for (const route of allRoutes) {
      expectError(route, 401, 'unauthorized');
      expectError(route, 503, 'service_unavailable');
      if (route.access === 'admin') expectError(route, 403, 'admin_required');
    }
  });

  it('documents the validation statuses of path parameters, queries and bodies', () => {
    for (const route of allRoutes) {
      if (route.params) expectError(route, 400, 'invalid_id');
      if (route.query) expectError(route, 400, 'invalid_query');
      if (takesBody(route)) {
        expectError(route, 413, 'payload_too_large');
        expectError(route, 415, 'unsupported_media_type');
      }
      if (route.body && route.bodyMode !== 'raw') {
        expectError(route, 400, 'invalid_json');
        expectError(route, 422, 'invalid_request_body');
      }
    }
  });

  it("documents every error the route declares (its guards', lookups' and parsers' included)", () => {
    for (const route of allRoutes) {
      for (const { status, code } of routeErrors(route)) expectError(route, status, code);
    }
  });

  it('documents route-specific errors raised through helpers', () => {
    expectError(find('get', '/agents/{id}'), 403, 'agent_pak_mismatch');
    expectError(find('get', '/agents/{id}'), 404, 'agent_not_found');
    expectError(find('get', '/agents'), 403, 'generator_required');
    expectError(find('post', '/agents/{id}/targets'), 404, 'stack_not_found');
    expectError(find('post', '/agents/{id}/targets'), 403, 'agent_not_registered');
    expectError(find('post', '/agents/{id}/targets'), 409, 'unique_violation');
    expectError(find('get', '/stacks/{id}'), 403, 'stack_not_owned');
    expectError(find('post', '/stacks'), 422, 'foreign_key_violation');
    expectError(find('post', '/generators'), 409, 'unique_violation');
    expectError(find('post', '/generators/{id}/register'), 409, 'already_registered');
    expectError(find('delete', '/agents/{id}/labels/{label}'), 400, 'invalid_input');
    expectError(find('post', '/stacks/{id}/deployment-objects'), 503, 'yaml_validator_busy');
    expectError(find('post', '/webhooks'), 400, 'invalid_url_scheme');
    expectError(find('post', '/webhooks'), 422, 'unsupported_field');
    expectError(find('put', '/webhooks/{id}'), 404, 'webhook_not_found');
    expectError(find('post', '/webhook-deliveries/{id}/redeliver'), 409, 'delivery_not_finished');
  });

  it('does not document what a route cannot answer (no 404 where a missing id is a 204)', () => {
    expect(operationOf(find('delete', '/agents/{id}')).responses).to.not.have.property('404');
    expect(operationOf(find('post', '/auth/pak')).responses).to.not.have.property('403');
    expect(operationOf(find('get', '/agents/{id}')).responses).to.not.have.property('422');
  });

  it('keeps route modules on declared error kinds (no ad-hoc 4xx ApiError a route could forget to declare)', () => {
    const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'resources');
    const adHoc = /\b(badRequest|forbidden|notFound|conflict|unprocessable)\(|new ApiError\(\s*4\d\d/;
    const offenders = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(path.join(dir, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line })),
      )
      .filter(({ line }) => adHoc.test(line))
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offenders, 'use errorKind(...) and list it (or the helper raising it) in the route’s `errors`').to.deep.equal([]);
  });
});
