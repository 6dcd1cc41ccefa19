/** An agent event as the `agent_events` table holds it; read by the agent-events resource, the fleet view and the agent channel. */
export interface AgentEventRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  agent_id: string;
  deployment_object_id: string;
  event_type: string;
  status: string;
  message: string | null;
}

export const AGENT_EVENT_COLUMNS = 'id, created_at, updated_at, deleted_at, agent_id, deployment_object_id, event_type, status, message';
