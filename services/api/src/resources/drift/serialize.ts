import type { DriftRecord } from '@brokkr/contracts';
import type { DriftRow } from './sql/drift-row.ts';
import type { DriftFilter, PageKey } from './sql/queries.ts';
import type { DriftFilterQuery } from './schemas.ts';

export function driftJson(r: DriftRow): DriftRecord {
  return {
    id: r.id,
    stack_id: r.stack_id,
    stack_name: r.stack_name,
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    cluster_name: r.cluster_name,
    deployment_object_id: r.deployment_object_id,
    object: { api_version: r.api_version, kind: r.kind, namespace: r.namespace, name: r.name },
    missing: r.missing,
    fields: r.fields,
    state: r.state,
    first_seen: r.first_seen.toISOString(),
    last_seen: r.last_seen.toISOString(),
    closed_at: r.closed_at?.toISOString() ?? null,
  };
}

/** The cursor of the page after `row`: opaque to clients (base64url of its first_seen and id). */
export const cursorAfter = (row: DriftRow): string => Buffer.from(JSON.stringify([row.first_seen_key, row.id])).toString('base64url');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** PostgreSQL's text form of a timestamptz (`2026-01-02 10:00:00.123456+00`). */
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2}){0,2}|Z)$/;

/** The page key a cursor stands for; undefined when it is not one this api made. */
export function pageKeyOf(cursor: string): PageKey | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [firstSeen, id] = value as unknown[];
    if (typeof firstSeen !== 'string' || typeof id !== 'string' || !UUID.test(id) || !PG_TIMESTAMP.test(firstSeen)) return undefined;
    return { firstSeen, id };
  } catch {
    return undefined;
  }
}

/** A read's filters from its query (the reader's own scope is added by the route). */
export function filterOf(q: DriftFilterQuery): DriftFilter {
  return {
    ...(q.agent_id !== undefined ? { agentId: q.agent_id.toLowerCase() } : {}),
    ...(q.state !== undefined ? { states: q.state } : {}),
    ...(q.since !== undefined ? { since: q.since } : {}),
    ...(q.until !== undefined ? { until: q.until } : {}),
    ...(q.kind !== undefined ? { kind: q.kind } : {}),
    ...(q.path !== undefined ? { path: q.path } : {}),
    ...(q.manager !== undefined ? { manager: q.manager } : {}),
  };
}
