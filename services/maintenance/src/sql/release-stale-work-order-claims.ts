import type { AuditRecord } from '@brokkr/contracts';
import type { TaskClient } from './queryable.ts';
import { workOrderAgents, type WorkOrderChange } from './work-order-agents.ts';

export interface ReleasedClaims extends WorkOrderChange {
  /** The `workorder.claim_released` entries written with the release (to publish on BROKKR_AUDIT). */
  audit: AuditRecord[];
}

/**
 * Stale claims: `CLAIMED` orders whose claimed_at + claim_timeout_seconds has
 * passed go back to `PENDING` with claimed_by/claimed_at cleared; retry_count is unchanged.
 * The agent completing the order at the same moment locks the row (its transaction moves the
 * order to the log and deletes it): SKIP LOCKED never waits on it and the outer WHERE re-checks
 * the claim, so whichever commits first wins and a second run changes nothing.
 *
 * The audit entry of each release (`workorder.claim_released`, actor system, the agent that held
 * the claim in details) is inserted by the same statement: a crash after the commit loses no
 * entry, and a second run, finding nothing stale, writes none.
 */
export async function releaseStaleWorkOrderClaims(db: TaskClient, limit: number): Promise<ReleasedClaims> {
  const { rows } = await db.query<{ count: number; agent_ids: string[]; audit: AuditRecord[] }>(
    `WITH stale AS (
       SELECT id, claimed_by, claimed_at, claim_timeout_seconds FROM work_orders
        WHERE status = 'CLAIMED'
          AND claimed_at + make_interval(secs => claim_timeout_seconds) < now()
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     ), released AS (
       UPDATE work_orders w
          SET status = 'PENDING', claimed_by = NULL, claimed_at = NULL
         FROM stale
        WHERE w.id = stale.id
          AND w.status = 'CLAIMED'
          AND w.claimed_at + make_interval(secs => w.claim_timeout_seconds) < now()
       RETURNING w.id, w.work_type, stale.claimed_by, stale.claimed_at, stale.claim_timeout_seconds
     ), audited AS (
       INSERT INTO audit_logs (id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details)
       SELECT gen_random_uuid(), now(), 'system', NULL, 'workorder.claim_released', 'work_order', r.id,
              jsonb_build_object('agent_id', r.claimed_by, 'claimed_at', r.claimed_at,
                                 'claim_timeout_seconds', r.claim_timeout_seconds, 'work_type', r.work_type)
         FROM released r
       RETURNING id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent
     )
     SELECT (SELECT count(*) FROM released)::int AS count,
            ${workOrderAgents('released')} AS agent_ids,
            (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM audited a) AS audit`,
    [limit],
  );
  const row = rows[0]!;
  return { count: row.count, agentIds: row.agent_ids, audit: row.audit };
}
