import type { TaskClient } from './queryable.ts';

/**
 * Agent-event retention: hard-deletes up to `limit` agent_events created more than
 * `retentionDays` ago, soft-deleted or not (Brokkr's eviction; incremental target state then
 * re-serves objects whose events are gone, as in Brokkr). SKIP LOCKED: a row being
 * soft-deleted by a cascade trigger right now waits for the next tick.
 */
export async function deleteOldAgentEvents(db: TaskClient, retentionDays: number, limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM agent_events
        WHERE created_at < now() - make_interval(days => $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM agent_events e USING doomed WHERE e.id = doomed.id`,
    [retentionDays, limit],
  );
  return result.rowCount ?? 0;
}
