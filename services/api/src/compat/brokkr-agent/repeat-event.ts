import type { Queryable } from '@brokkr/db';
import { AGENT_EVENT_COLUMNS, type AgentEventRow } from '../../domain/agent-event-row.ts';

/**
 * Brokkr's agent, served its full target state, applies every object on every poll and reports
 * SUCCESS each time. A SUCCESS for an object whose latest event from that agent is already
 * SUCCESS says nothing new: it is answered with that event instead of a new row and a new
 * `deployment.applied` webhook every polling interval.
 */
export async function repeatedSuccess(
  db: Queryable,
  agentId: string,
  deploymentObjectId: string,
  status: string,
): Promise<AgentEventRow | undefined> {
  if (status.toUpperCase() !== 'SUCCESS') return undefined;
  const { rows } = await db.query<AgentEventRow>(
    `SELECT ${AGENT_EVENT_COLUMNS} FROM agent_events
      WHERE agent_id = $1 AND deployment_object_id = $2 AND deleted_at IS NULL
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [agentId, deploymentObjectId],
  );
  const latest = rows[0];
  return latest && latest.status.toUpperCase() === 'SUCCESS' ? latest : undefined;
}
