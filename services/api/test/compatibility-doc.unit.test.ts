import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import type { AnyRoute } from '../src/http/route.ts';
import { routeErrors } from '../src/http/route-errors.ts';
import { allRoutes } from '../src/resources/index.ts';
import { BROKKR_ERROR_CODES, BROKKR_OPERATIONS } from './fixtures/brokkr-v1.ts';

/**
 * docs/compatibility.md makes three claims a Brokkr client relies on, each checked here against
 * the api's routes (no server needed): what is not served yet is really not served; everything
 * else of Brokkr's v1 document is served; and every error a Brokkr operation can answer with
 * that Brokkr's own handlers do not (a new code, or a known code with another status) is named
 * in the doc, so a client written against Brokkr learns about it there.
 */

const doc = readFileSync(path.join(repoRoot, 'docs/compatibility.md'), 'utf8');

/** `GET /agents/{id}` and the express path `/agents/:id` → `GET /agents/{}`. */
const operationKey = (method: string, route: string) => `${method.toUpperCase()} ${route.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '{}')}`;

const served = new Map<string, AnyRoute>(allRoutes.map((r) => [operationKey(r.method, r.path), r]));

/** `GET/POST /work-orders/{id}` in the doc's table → ['GET /work-orders/{}', 'POST /work-orders/{}']. */
function listedAsNotServed(): string[] {
  const section = /^## Not served yet\n([\s\S]*?)^## /m.exec(doc)?.[1] ?? '';
  const out: string[] = [];
  for (const [, methods, route] of section.matchAll(/`((?:GET|POST|PUT|DELETE|PATCH)(?:\/(?:GET|POST|PUT|DELETE|PATCH))*) (\/[^`]+)`/g)) {
    for (const method of methods!.split('/')) out.push(operationKey(method, route!));
  }
  return out;
}

const brokkrOperations = BROKKR_OPERATIONS.map((line) => {
  const [method, route] = line.split(' ');
  return operationKey(method!, route!);
});

/** `code (status) on METHOD /path` for each error of a served Brokkr operation that Brokkr does not answer with. */
function errorsBrokkrDoesNotAnswer(): Map<string, string[]> {
  const differences = new Map<string, string[]>();
  for (const operation of brokkrOperations) {
    const route = served.get(operation);
    if (!route) continue;
    for (const { status, code } of routeErrors(route)) {
      if (BROKKR_ERROR_CODES[code]?.includes(status)) continue;
      const where = differences.get(code) ?? [];
      where.push(`${status} on ${operation}`);
      differences.set(code, where);
    }
  }
  return differences;
}

describe('docs/compatibility.md against the api', () => {
  it('"Not served yet" lists only endpoints the api really does not serve (update the doc when one lands)', () => {
    // The list may be empty: it shrinks to nothing as the last groups land.
    expect(
      listedAsNotServed().filter((e) => served.has(e)),
      'served, yet listed as missing',
    ).to.deep.equal([]);
  });

  it('"Served: everything else": every operation of Brokkr v1 is served or listed as not served yet', () => {
    const notServed = new Set(listedAsNotServed());
    expect(brokkrOperations).to.have.length(BROKKR_OPERATIONS.length).and.length.greaterThan(90);
    expect(
      brokkrOperations.filter((op) => !served.has(op) && !notServed.has(op)),
      'Brokkr operations the api does not serve and the doc does not list',
    ).to.deep.equal([]);
  });

  it('names every error code a Brokkr operation can answer with that Brokkr does not (new, or with another status)', () => {
    const differences = errorsBrokkrDoesNotAnswer();
    // The api's own JSON errors (invalid_id, service_unavailable, …) are always among them: an empty
    // map means the derivation from the routes broke, not that there is nothing to document.
    expect([...differences.keys()]).to.include.members(['invalid_id', 'service_unavailable', 'invalid_json']);
    const undocumented = [...differences]
      .filter(([code]) => !doc.includes(`\`${code}\``))
      .map(([code, where]) => `${code}: ${where.join(', ')}`);
    expect(undocumented, 'error codes a Brokkr client may get that docs/compatibility.md does not name').to.deep.equal([]);
  });
});
