import type { K8sEventFrameBody, PodLogLineFrameBody } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';

/** One statement per batch: the ingest buffers frames for a moment so a busy log stream is not one round trip per line. */
export async function insertK8sEvents(db: Queryable, rows: K8sEventFrameBody[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO agent_k8s_events (agent_id, stack_id, observed_at, reason, message, event_type, source, involved_object)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[])`,
    [
      rows.map((r) => r.agent_id),
      rows.map((r) => r.stack_id),
      rows.map((r) => r.observed_at),
      rows.map((r) => r.reason),
      rows.map((r) => r.message),
      rows.map((r) => r.event_type),
      rows.map((r) => r.source),
      rows.map((r) => JSON.stringify(r.involved_object)),
    ],
  );
}

export async function insertPodLogLines(db: Queryable, rows: PodLogLineFrameBody[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO agent_pod_logs (agent_id, stack_id, namespace, pod, container, ts, line)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])`,
    [
      rows.map((r) => r.agent_id),
      rows.map((r) => r.stack_id),
      rows.map((r) => r.namespace),
      rows.map((r) => r.pod),
      rows.map((r) => r.container),
      rows.map((r) => r.ts),
      rows.map((r) => r.line),
    ],
  );
}
