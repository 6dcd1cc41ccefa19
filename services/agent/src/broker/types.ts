/**
 * The broker's v1 wire shapes as the agent uses them. The shapes themselves live in
 * @brokkr/contracts (one definition for the api that serves them and the agent that reads them);
 * this module only narrows them to the values this agent sends.
 */
import type {
  Agent,
  AgentEvent,
  HealthStatus,
  HealthSummary,
  HealthUpdate,
  Heartbeat,
  NewAgentEvent,
  ResourceHealth,
} from '@brokkr/contracts';

export type { AuthPayload, DeploymentObject, HealthStatus, HealthSummary } from '@brokkr/contracts';
export type AgentRecord = Agent;
export type AgentEventRecord = AgentEvent;
export type HealthResource = ResourceHealth;
export type HeartbeatBody = Heartbeat;

/** What the agent did with a deployment object (our event_type values; Brokkr's agent sends DEPLOY). */
export type AgentEventType = 'APPLIED' | 'UPDATED' | 'DELETED' | 'window_blocked';
export type AgentEventStatus = 'SUCCESS' | 'FAILURE' | 'BLOCKED';

/** The events this agent posts: the wire shape with its own event values. */
export type AgentEventBody = NewAgentEvent & { event_type: AgentEventType; status: AgentEventStatus; message: string | null };

/** One entry of a health report, always with a summary. */
export type HealthRecord = HealthUpdate['deployment_objects'][number] & { status: HealthStatus; summary: HealthSummary };
