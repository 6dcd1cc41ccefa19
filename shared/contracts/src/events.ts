import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/**
 * Brokkr's webhook event types and ours after them (`stack.expiring`,
 * `stack.expired`: expiring preview stacks; `rollout.*`: progressive rollouts; `approval.requested`: a rollout wave waits for approvals; `preview.*`: diff
 * previews; `drift.*`: changes made behind the agent's back; `deployment.render_failed`: an agent
 * targeted after an object was stored, or whose cluster changed, for which it cannot be rendered); the subject is
 * `brokkr.events.<event_type>`.
 */
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
  'stack.expiring',
  'stack.expired',
  'rollout.started',
  'rollout.wave_started',
  'rollout.succeeded',
  'rollout.failed',
  'rollout.rolled_back',
  'rollout.paused',
  'rollout.resumed',
  'rollout.aborted',
  'rollout.promoted',
  'approval.requested',
  'preview.created',
  'preview.completed',
  'drift.detected',
  'drift.corrected',
  'drift.resolved',
  'deployment.render_failed',
  'deployment.window_blocked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Brokkr's webhook payload, byte for byte the body subscribers receive, and the message on
 * `brokkr.events.<event_type>`. Consumers accept any event type (a newer api may add some), so
 * the schema checks the shape, not the list.
 */
export const eventEnvelopeSchema = z.object({
  id: z.guid(),
  event_type: z.string().min(1).max(100),
  /** RFC 3339, UTC, `Z`. */
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventEnvelope = z.output<typeof eventEnvelopeSchema>;

/** An envelope the api builds: its type is one of ours. */
export interface DomainEvent extends EventEnvelope {
  event_type: EventType;
}

export function buildEvent(eventType: EventType, data: Record<string, unknown>, now: Date = new Date()): DomainEvent {
  return { id: randomUUID(), event_type: eventType, timestamp: now.toISOString(), data };
}

/** Undefined when the text is not an envelope (a consumer then terminates it instead of retrying). */
export function parseEventEnvelope(text: string): EventEnvelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = eventEnvelopeSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Brokkr's field order and nothing else: jsonb (the outbox) does not keep key order, so a relayed
 * event is put back in the order a first-hand one has.
 */
export function serializeEventEnvelope(e: EventEnvelope): string {
  return JSON.stringify(orderedEnvelope(e));
}

export function orderedEnvelope(e: EventEnvelope): EventEnvelope {
  return { id: e.id, event_type: e.event_type, timestamp: e.timestamp, data: e.data };
}
