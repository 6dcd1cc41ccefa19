import { prepared, type Queryable } from '@brokkr/db';
import { isoTimestampSql, outboxInsertSql, type StatementEvent } from '@brokkr/outbox';
import { WORK_ORDER_COLUMNS, type WorkOrderRow } from '../../../domain/work-order-row.ts';

/** The `workorder.created` payload's data, in Brokkr's key order. */
export const CREATED_DATA_KEYS = ['work_order_id', 'work_type', 'status', 'created_at'] as const;

/** What a create stores: the order and its targeting (already validated, deduplicated). */
export interface NewWorkOrderFields {
  workType: string;
  yamlContent: string;
  maxRetries: number;
  backoffSeconds: number;
  claimTimeoutSeconds: number;
  agentIds: readonly string[];
  labels: readonly string[];
  annotations: readonly (readonly [key: string, value: string])[];
}

export interface CreatedWorkOrder {
  order: WorkOrderRow;
  /** The live agents the order targets (explicit ids, label and annotation matches): woken after commit. */
  targetedAgents: string[];
  /** The `workorder.created` data its outbox row holds. */
  eventData: Record<string, unknown>;
}

const createStatement = prepared(
  'brokkr_work_order_create',
  `WITH wo AS (
     INSERT INTO work_orders (work_type, yaml_content, max_retries, backoff_seconds, claim_timeout_seconds)
     VALUES ($1, $2, $3, $4, $5)
     RETURNING ${WORK_ORDER_COLUMNS}
   ), targets AS (
     INSERT INTO work_order_targets (work_order_id, agent_id) SELECT wo.id, a.id FROM wo, unnest($6::uuid[]) AS a(id)
   ), labels AS (
     INSERT INTO work_order_labels (work_order_id, label) SELECT wo.id, l.label FROM wo, unnest($7::text[]) AS l(label)
   ), annotations AS (
     INSERT INTO work_order_annotations (work_order_id, key, value)
     SELECT wo.id, x.key, x.value FROM wo, unnest($8::text[], $9::text[]) AS x(key, value)
   ), targeted AS (
     SELECT a.id FROM agents a WHERE a.id = ANY($6::uuid[]) AND a.deleted_at IS NULL
     UNION
     SELECT al.agent_id FROM agent_labels al JOIN agents a ON a.id = al.agent_id AND a.deleted_at IS NULL
      WHERE al.label = ANY($7::text[])
     UNION
     SELECT aa.agent_id FROM agent_annotations aa
       JOIN unnest($8::text[], $9::text[]) AS x(key, value) ON aa.key = x.key AND aa.value = x.value
       JOIN agents a ON a.id = aa.agent_id AND a.deleted_at IS NULL
   ), event AS (
     ${outboxInsertSql({
       event: '$10::jsonb',
       from: 'wo',
       data: `jsonb_build_object('work_order_id', wo.id, 'work_type', wo.work_type, 'status', wo.status,
                                 'created_at', ${isoTimestampSql('wo.created_at')})`,
     })}
   )
   SELECT wo.*, (SELECT coalesce(array_agg(id::text), '{}') FROM targeted) AS targeted_agents, event.event_data FROM wo, event`,
);

/**
 * One statement (its own transaction: no BEGIN/COMMIT round trips): the order, its targets,
 * labels and annotations, its `workorder.created` outbox row (`event`), and the agents it targets
 * (computed from the parameters: data-modifying CTEs do not see each other's rows). An unknown
 * agent id fails the whole statement with a foreign-key violation.
 */
export async function insertWorkOrder(db: Queryable, f: NewWorkOrderFields, event: StatementEvent): Promise<CreatedWorkOrder> {
  const keys = f.annotations.map(([k]) => k);
  const values = f.annotations.map(([, v]) => v);
  const { rows } = await db.query<WorkOrderRow & { targeted_agents: string[]; event_data: Record<string, unknown> }>(
    createStatement([
      f.workType,
      f.yamlContent,
      f.maxRetries,
      f.backoffSeconds,
      f.claimTimeoutSeconds,
      f.agentIds,
      f.labels,
      keys,
      values,
      JSON.stringify(event),
    ]),
  );
  const { targeted_agents: targetedAgents, event_data: eventData, ...order } = rows[0]!;
  return { order, targetedAgents, eventData };
}
