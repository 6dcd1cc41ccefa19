import type { Queryable } from '@brokkr/db';
import { RETENTION_SECONDS } from '../schemas.ts';

/** The read-only statements of cluster events. Rows are selected by ingestion time (created_at), newest first. */

export interface K8sEventRow {
  id: string;
  agent_id: string;
  stack_id: string;
  observed_at: Date;
  reason: string;
  message: string;
  event_type: string;
  source: string | null;
  involved_object: { api_version: string; kind: string; namespace: string | null; name: string; uid: string | null };
  created_at: Date;
}

export interface PodLogRow {
  id: string;
  agent_id: string;
  stack_id: string;
  namespace: string;
  pod: string;
  container: string;
  ts: Date;
  line: string;
  created_at: Date;
}

export type ClusterEventsTable = 'agent_k8s_events' | 'agent_pod_logs';

const COLUMNS: Record<ClusterEventsTable, string> = {
  agent_k8s_events: 'id, agent_id, stack_id, observed_at, reason, message, event_type, source, involved_object, created_at',
  agent_pod_logs: 'id, agent_id, stack_id, namespace, pod, container, ts, line, created_at',
};

// The lower bound is computed by the database so that the 6-hour ceiling does not depend on the
// api host's clock: GREATEST(since, now() - 6 h), or the ceiling alone without `since`.
const CEILING = `now() - make_interval(secs => ${RETENTION_SECONDS})`;
const BOUND = `GREATEST(COALESCE($2::timestamptz, '-infinity'), ${CEILING})`;

/** One page of a stack's cluster events (`limit` already clamped), newest first, id as the tie-break. */
export async function clusterEventsPage<Row>(
  db: Queryable,
  table: ClusterEventsTable,
  page: { stackId: string; since: string | undefined; limit: number },
): Promise<Row[]> {
  const { stackId, since, limit } = page;
  const { rows } = await db.query(
    `SELECT ${COLUMNS[table]} FROM ${table} WHERE stack_id = $1 AND created_at >= ${BOUND} ORDER BY created_at DESC, id DESC LIMIT $3`,
    [stackId, since ?? null, limit],
  );
  return rows as Row[];
}

/** The oldest row still served for the stack (inside the retention window), or null when there is none. */
export async function oldestRetained(db: Queryable, table: ClusterEventsTable, stackId: string): Promise<Date | null> {
  const { rows } = await db.query<{ oldest: Date | null }>(
    `SELECT min(created_at) AS oldest FROM ${table} WHERE stack_id = $1 AND created_at >= ${CEILING}`,
    [stackId],
  );
  return rows[0]?.oldest ?? null;
}
