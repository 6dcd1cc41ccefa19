import type { K8sEventFrameBody, PodLogLineFrameBody } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';

/**
 * One statement per batch: the ingest buffers frames for a moment so a busy log stream is not one
 * round trip per line. Rows of a batch get `created_at` one microsecond apart in arrival order
 * (instead of one shared now()), so the reads' newest-first order is the order the frames
 * arrived in, within a batch too (batches are written one after the other).
 */
export async function insertK8sEvents(db: Queryable, rows: K8sEventFrameBody[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO agent_k8s_events (agent_id, stack_id, observed_at, reason, message, event_type, source, involved_object, created_at)
     SELECT f.a, f.s, f.o, f.r, f.m, f.t, f.src, f.io, now() + (f.n - 1) * interval '1 microsecond'
       FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[])
            WITH ORDINALITY AS f (a, s, o, r, m, t, src, io, n)
`,
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
    `INSERT INTO agent_pod_logs (agent_id, stack_id, namespace, pod, container, ts, line, created_at)
     SELECT f.a, f.s, f.ns, f.pod, f.c, f.ts, f.line, now() + (f.n - 1) * interval '1 microsecond'
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])
            WITH ORDINALITY AS f (a, s, ns, pod, c, ts, line, n)
`,
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
