import { randomUUID } from 'node:crypto';

/** Brokkr's webhook event types (contract §5.1); the subject is `brokkr.events.<event_type>`. */
export const EVENT_TYPES = [
  'agent.registered',
  'agent.deregistered',
  'stack.created',
  'stack.deleted',
  'deployment.created',
  'deployment.applied',
  'deployment.failed',
  'deployment.deleted',
  'workorder.created',
  'workorder.claimed',
  'workorder.completed',
  'workorder.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Brokkr's webhook payload, byte for byte the body subscribers receive. */
export interface DomainEvent {
  id: string;
  event_type: EventType;
  /** RFC 3339, UTC, `Z`. */
  timestamp: string;
  data: Record<string, unknown>;
}

export function buildEvent(eventType: EventType, data: Record<string, unknown>, now: Date = new Date()): DomainEvent {
  return { id: randomUUID(), event_type: eventType, timestamp: now.toISOString(), data };
}
