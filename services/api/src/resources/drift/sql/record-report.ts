import type { Queryable } from '@brokkr/db';
import type { DriftField, DriftObject } from '@brokkr/contracts';

/** One object's report as the statements take it (the batch's entries, validated). */
export interface ReportInput {
  id: string;
  stack_id: string;
  deployment_object_id: string | null;
  object: DriftObject;
  state: 'open' | 'corrected' | 'resolved';
  missing: boolean;
  fields: DriftField[];
  observed_at: string;
}

/** What a report did to the records: the record it touched and how. */
export interface ReportOutcome {
  id: string;
  stack_id: string;
  agent_id: string;
  deployment_object_id: string | null;
  api_version: string;
  kind: string;
  namespace: string | null;
  name: string;
  missing: boolean;
  paths: string[];
  managers: (string | null)[];
  state: string;
  /** The episode was new to the hub: a record was inserted. */
  inserted: boolean;
}

const RETURNED = 'id, stack_id, agent_id, deployment_object_id, api_version, kind, namespace, name, missing, paths, managers, state';

/** `<group>/<Kind>/<namespace>/<name>`: one object whatever version of its group a manifest named. */
export function objectKey(o: DriftObject): string {
  const slash = o.api_version.indexOf('/');
  const group = slash < 0 ? '' : o.api_version.slice(0, slash);
  return `${group}/${o.kind}/${o.namespace ?? ''}/${o.name}`;
}

function values(agentId: string, r: ReportInput): unknown[] {
  return [
    r.id,
    agentId,
    r.stack_id,
    r.deployment_object_id,
    r.object.api_version,
    r.object.kind,
    r.object.namespace,
    r.object.name,
    objectKey(r.object),
    r.missing,
    JSON.stringify(r.fields),
    r.fields.map((f) => f.path),
    r.fields.map((f) => f.manager),
    r.observed_at,
  ];
}

// $1 id, $2 agent, $3 stack, $4 deployment object, $5 api_version, $6 kind, $7 namespace, $8 name,
// $9 object key, $10 missing, $11 fields, $12 paths, $13 managers, $14 observed at.
// An object id the stack does not hold is dropped rather than refused: the record still names the object.
const DEPLOYMENT_OBJECT = '(SELECT d.id FROM deployment_objects d WHERE d.id = $4::uuid AND d.stack_id = $3::uuid)';
const OPEN_ONE = `r.agent_id = $2::uuid AND r.stack_id = $3::uuid AND r.object_key = $9 AND r.state = 'open'`;
const INSERT_COLUMNS = `(id, agent_id, stack_id, deployment_object_id, api_version, kind, namespace, name, object_key, missing,
   fields, paths, managers, state, first_seen, last_seen, closed_at)`;
const REFRESH = `missing = $10, fields = $11::jsonb, paths = $12::text[], managers = $13::text[],
   last_seen = greatest(r.last_seen, $14::timestamptz), deployment_object_id = coalesce(${DEPLOYMENT_OBJECT}, r.deployment_object_id)`;

/**
 * The object is drifted now: refresh the open record of this object (whatever episode id it was
 * opened under: an agent restarted since), else open one under the report's id. A report of an
 * episode the hub already closed (a batch sent again after a correction, or after an operator
 * accepted it) conflicts on the id and changes nothing.
 */
const OPEN_SQL = `
WITH upd AS (
  UPDATE drift_records r SET ${REFRESH} WHERE ${OPEN_ONE}
  RETURNING ${RETURNED}, false AS inserted
), ins AS (
  INSERT INTO drift_records ${INSERT_COLUMNS}
  SELECT $1::uuid, $2::uuid, $3::uuid, ${DEPLOYMENT_OBJECT}, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::text[], $13::text[],
         'open', $14::timestamptz, $14::timestamptz, NULL
   WHERE NOT EXISTS (SELECT 1 FROM upd)
  ON CONFLICT DO NOTHING
  RETURNING ${RETURNED}, true AS inserted
)
SELECT * FROM upd UNION ALL SELECT * FROM ins`;

/**
 * The agent put the object back: close the open record as corrected; if the hub never saw the
 * episode open (detected and corrected between two batches), record it closed at once.
 */
const CORRECTED_SQL = `
WITH upd AS (
  UPDATE drift_records r SET ${REFRESH}, state = 'corrected', closed_at = greatest(r.first_seen, $14::timestamptz)
   WHERE ${OPEN_ONE}
  RETURNING ${RETURNED}, false AS inserted
), ins AS (
  INSERT INTO drift_records ${INSERT_COLUMNS}
  SELECT $1::uuid, $2::uuid, $3::uuid, ${DEPLOYMENT_OBJECT}, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::text[], $13::text[],
         'corrected', $14::timestamptz, $14::timestamptz, $14::timestamptz
   WHERE NOT EXISTS (SELECT 1 FROM upd)
  ON CONFLICT DO NOTHING
  RETURNING ${RETURNED}, true AS inserted
)
SELECT * FROM upd UNION ALL SELECT * FROM ins`;

/** The drift went away without the agent (reverted by hand, a new version, a new ignore rule): close it as resolved. */
const RESOLVED_SQL = `
UPDATE drift_records r SET state = 'resolved', closed_at = greatest(r.first_seen, $4::timestamptz),
       last_seen = greatest(r.last_seen, $4::timestamptz)
 WHERE r.agent_id = $1::uuid AND r.stack_id = $2::uuid AND r.object_key = $3 AND r.state = 'open'
RETURNING ${RETURNED}, false AS inserted`;

/** Applies one report; undefined when it changed nothing (a repeat, or nothing open to resolve). */
export async function recordReport(db: Queryable, agentId: string, report: ReportInput): Promise<ReportOutcome | undefined> {
  const { rows } =
    report.state === 'resolved'
      ? await db.query<ReportOutcome>(RESOLVED_SQL, [agentId, report.stack_id, objectKey(report.object), report.observed_at])
      : await db.query<ReportOutcome>(report.state === 'open' ? OPEN_SQL : CORRECTED_SQL, values(agentId, report));
  return rows[0];
}

/**
 * A full check of these stacks started at `startedAt` and reported every drift it found: the
 * agent's open records of them that it did not report since are gone (resolved).
 */
export async function resolveUnseen(
  db: Queryable,
  agentId: string,
  stackIds: readonly string[],
  startedAt: string,
): Promise<ReportOutcome[]> {
  if (stackIds.length === 0) return [];
  const { rows } = await db.query<ReportOutcome>(
    `UPDATE drift_records r SET state = 'resolved', closed_at = greatest(r.first_seen, $3::timestamptz)
      WHERE r.agent_id = $1 AND r.stack_id = ANY($2::uuid[]) AND r.state = 'open' AND r.last_seen < $3::timestamptz
     RETURNING ${RETURNED}, false AS inserted`,
    [agentId, stackIds, startedAt],
  );
  return rows;
}
