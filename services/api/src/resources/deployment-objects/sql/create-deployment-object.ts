import { prepared, type Queryable } from '@brokkr/db';
import { isoTimestampSql, outboxInsertSql, type StatementEvent } from '@brokkr/outbox';
import { agentsForOneStackSql, distinctSorted } from '../../../domain/agents-for-stacks.ts';
import { dependentsOfSql } from '../../../domain/dependency-selectors.ts';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from '../../../domain/deployment-object-row.ts';
import { CONFINED_AGENTS_SELECT, type ConfinedAgent } from '../../../domain/confined-agents.ts';

export type { ConfinedAgent } from '../../../domain/confined-agents.ts';

export interface NewDeploymentObject {
  stackId: string;
  yamlContent: string;
  yamlChecksum: string;
  isDeletionMarker: boolean;
  /** Only a stack of this generator takes the object; null when the caller may write to any stack. */
  ownerGeneratorId: string | null;
  /**
   * The object was checked against the grants of the stack's confined agents (placement-check.ts):
   * insert it whatever they are. False: insert only if no agent of the stack is confined.
   */
  grantsChecked: boolean;
  /**
   * What a chart- or overlay-backed object renders from (its pinned source and values), stored with
   * it; null for plain YAML.
   */
  source: { spec: Record<string, unknown>; values: Record<string, unknown> | null } | null;
  /**
   * The agents' renders were prepared (rendering/prepare.ts) and are stored with the object: insert
   * it even when the stack has override layers. False: insert nothing while the stack has one, and
   * say so (`layered`): the caller renders first.
   */
  rendered: boolean;
  /** The stack's layers_revision the renders were made with; null when not rendered. */
  layersRevision: number | null;
  /** Who submits it: 'admin' or the generator's id (a rollout's approvers exclude them); null when not known. */
  submittedBy?: string | null;
}

/** The `deployment.created` payload's data, in Brokkr's key order. */
export const DEPLOYMENT_CREATED_KEYS = ['deployment_object_id', 'stack_id', 'sequence_id', 'created_at'] as const;

// Every column but yaml_content comes back: the caller has the content it sent (up to megabytes),
// and sending it back would copy it into the CTE's tuplestore, onto the socket and through the
// driver's parser for nothing.
const RETURNED_COLUMNS = DEPLOYMENT_OBJECT_COLUMNS.split(', ').filter((c) => c !== 'yaml_content');
const I_COLUMNS = RETURNED_COLUMNS.map((c) => `ins.${c}`).join(', ');

// The whole write in ONE statement (its own transaction, no BEGIN/COMMIT round trips): the live
// stack is locked FOR SHARE (it cannot be deleted before this commits) and checked for its owner;
// the row, its `deployment.created` outbox row and the agents to wake come out together. Who is
// associated with the stack does not depend on the new object, so the wake-up subquery (which
// sees the statement's snapshot) gives agentsForStack's answer. With no live stack, or one of
// another generator, nothing is inserted and `ins_id` is null. The agents of stacks that depend on
// this one fleet-wide are woken too (migration 0028): a new object is ready nowhere yet, so they
// are held back again (directly or by a selector matching it, migration 0031); for a stack nobody
// depends on that costs one probe of idx_stack_dependencies_depends_on, one read of its labels
// and one probe of the selectors' GIN index.
//
// Why FOR SHARE and not the cheaper-looking FOR KEY SHARE (what the foreign key takes) or no
// lock at all: a stack is deleted by an UPDATE of deleted_at (soft delete), and its trigger
// retires the stack's live objects and appends the deletion marker. That UPDATE does not touch
// the key, so it takes FOR NO KEY UPDATE, which FOR KEY SHARE (and so the FK check) does not
// block: without FOR SHARE a soft delete could commit between our read and our commit, its
// trigger would not see our uncommitted row, and a live object would outlive its stack's
// deletion marker. FOR SHARE makes the soft delete wait for us (its trigger then retires our
// object), or, if it committed first, makes us re-check deleted_at and insert nothing (404).
// It costs no more than the FK's own lock: either writes one lock record (xmax) on the stack
// tuple, and the FK check then finds our stronger lock and writes nothing (pg_stat_statements,
// ADR 0027: 0 WAL records for the FK check with FOR SHARE, 1 without).
//
// `layered`: the stack has override layers, so each agent's YAML is its own render; unless the
// caller rendered them ($10), nothing is inserted and the caller goes the rendering way. A caller
// that rendered with the layers of revision $11 inserts only if they are still the stack's
// (`layers_changed` otherwise: it renders again). Both read the locked stack row (migration 0026).
//
// `confined` are the stack's agents whose grant does not reach the whole cluster (the partial
// index on restricted registrations finds the few there are; migration 0021): unless the caller
// checked the object against them already ($7), nothing is inserted while there is one, and they
// come back for placement-check.ts to judge. A deletion marker places nothing and is never held.
const insertStatement = prepared(
  'brokkr_deployment_object_create',
  `WITH stack AS (
     SELECT id, generator_id, has_layers, layers_revision FROM stacks WHERE id = $1 AND deleted_at IS NULL FOR SHARE
   ),
   wake AS (
     SELECT id FROM (${agentsForOneStackSql('$1::uuid')}) holders
     UNION ALL
     SELECT fd.id FROM (${dependentsOfSql('$1::uuid')}) sd CROSS JOIN LATERAL (${agentsForOneStackSql('sd.stack_id')}) fd
      WHERE sd.scope = 'fleet'
   ),
   confined AS (
     ${CONFINED_AGENTS_SELECT} AND NOT $4
   ),
   ins AS (
     INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker, submitted_by)
     SELECT stack.id, $2, $3, $4, $12 FROM stack
      WHERE ($5::uuid IS NULL OR stack.generator_id = $5::uuid)
        AND ($7::boolean OR NOT EXISTS (SELECT 1 FROM confined))
        AND ($10::boolean OR $4 OR NOT stack.has_layers)
        AND ($11::bigint IS NULL OR stack.layers_revision = $11::bigint)
     RETURNING ${RETURNED_COLUMNS.join(', ')}
   ),
   rendered AS (
     INSERT INTO rendered_objects (deployment_object_id, source, source_values)
     SELECT ins.id, $8::jsonb, $9::jsonb FROM ins WHERE $10::boolean
   ),
   event AS (
     ${outboxInsertSql({
       event: '$6::jsonb',
       from: 'ins',
       data: `jsonb_build_object('deployment_object_id', ins.id, 'stack_id', ins.stack_id, 'sequence_id', ins.sequence_id,
                                 'created_at', ${isoTimestampSql('ins.created_at')})`,
     })}
   )
   SELECT ${I_COLUMNS}, ins.id AS ins_id, event.event_data,
          EXISTS (SELECT 1 FROM stack) AS stack_found,
          EXISTS (SELECT 1 FROM stack WHERE $5::uuid IS NULL OR stack.generator_id = $5::uuid) AS stack_owned,
          coalesce((SELECT has_layers FROM stack), false) AS layered,
          coalesce((SELECT $11::bigint IS NOT NULL AND layers_revision <> $11::bigint FROM stack), false) AS layers_changed,
          ARRAY(SELECT id FROM wake) AS wake_agent_ids,
          CASE WHEN ins.id IS NULL THEN (SELECT jsonb_agg(confined) FROM confined) END AS confined
     FROM (SELECT 1) one LEFT JOIN ins ON true LEFT JOIN event ON true`,
);

export type InsertOutcome =
  | { inserted: true; row: DeploymentObjectRow; eventData: Record<string, unknown>; wakeAgentIds: string[] }
  | { inserted: false; stackFound: boolean; stackOwned: boolean; confined: ConfinedAgent[]; layered: boolean; layersChanged: boolean };

/**
 * sequence_id comes from the table's global BIGSERIAL. Also returns the stored event data and the
 * agents associated with the stack (agentsForStack's answer), whom the caller wakes after commit.
 */
export async function insertDeploymentObject(db: Queryable, object: NewDeploymentObject, event: StatementEvent): Promise<InsertOutcome> {
  type Result = Omit<DeploymentObjectRow, 'yaml_content'> & {
    ins_id: string | null;
    event_data: Record<string, unknown>;
    stack_found: boolean;
    stack_owned: boolean;
    layered: boolean;
    layers_changed: boolean;
    wake_agent_ids: string[];
    confined: ConfinedAgent[] | null;
  };
  const { rows } = await db.query<Result>(
    insertStatement([
      object.stackId,
      object.yamlContent,
      object.yamlChecksum,
      object.isDeletionMarker,
      object.ownerGeneratorId,
      JSON.stringify(event),
      object.grantsChecked,
      object.source ? JSON.stringify(object.source.spec) : null,
      object.source?.values ? JSON.stringify(object.source.values) : null,
      object.rendered,
      object.layersRevision,
      object.submittedBy ?? null,
    ]),
  );
  const r = rows[0]!;
  if (r.ins_id === null)
    return {
      inserted: false,
      stackFound: r.stack_found,
      stackOwned: r.stack_owned,
      confined: r.confined ?? [],
      layered: r.layered,
      layersChanged: r.layers_changed,
    };
  // In DEPLOYMENT_OBJECT_COLUMNS' order: the API serialises the row's keys in this order.
  const row: DeploymentObjectRow = {
    id: r.id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
    sequence_id: r.sequence_id,
    stack_id: r.stack_id,
    yaml_content: object.yamlContent,
    yaml_checksum: r.yaml_checksum,
    submitted_at: r.submitted_at,
    is_deletion_marker: r.is_deletion_marker,
  };
  return { inserted: true, row, eventData: r.event_data, wakeAgentIds: distinctSorted(r.wake_agent_ids) };
}
