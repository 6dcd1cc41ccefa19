import { BrokkrError } from '@brokkr/errors';

/**
 * The NATS names are a public contract (docs/nats-subjects.md): internal integrations subscribe
 * to them, so they change only together with that document.
 */
export const STREAMS = {
  /** Domain events (Brokkr's webhook envelope), one subject per event type. */
  events: 'BROKKR_EVENTS',
  /** Audit entries on their way to the audit-writer. */
  audit: 'BROKKR_AUDIT',
} as const;

/**
 * The hub's durable pull consumers, one per stream. Integrations must not bind to them (a message
 * handed to an integration is not handed to the service), and their NATS user cannot.
 */
export const DURABLES = {
  /** On BROKKR_EVENTS, shared by every webhook-dispatcher replica. */
  webhookDispatcher: 'webhook-dispatcher',
  /** On BROKKR_AUDIT, shared by every audit-writer replica. */
  auditWriter: 'audit-writer',
} as const;

/** NATS subject tokens may not contain whitespace, `.`, `*` or `>`. */
const TOKEN = /^[^\s.*>]+$/;

function token(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new BrokkrError(`invalid ${what} for a NATS subject: ${JSON.stringify(value)}`);
  return value;
}

/** Event types contain dots (`deployment.created`), which become subject levels on purpose. */
function dotted(value: string, what: string): string {
  for (const part of value.split('.')) token(part, what);
  return value;
}

export const SUBJECTS = {
  /** Everything in BROKKR_EVENTS. */
  eventsAll: 'brokkr.events.>',
  event: (eventType: string) => `brokkr.events.${dotted(eventType, 'event type')}`,
  /** Everything in BROKKR_AUDIT. */
  auditAll: 'brokkr.audit.>',
  audit: (action: string) => `brokkr.audit.${dotted(action, 'audit action')}`,

  // Core NATS (no persistence): hints that wake someone up; losing one only delays work.
  /** The agent's target state may have changed (long-poll wake-up on any api replica). */
  notifyAgent: (agentId: string) => `brokkr.notify.agent.${token(agentId, 'agent id')}`,
  notifyAgentAll: 'brokkr.notify.agent.*',
  /** New webhook deliveries are due. */
  notifyDeliveries: 'brokkr.notify.deliveries',
  /** Drop a cached entry on every replica at once (e.g. `pak` on rotation or deletion). */
  cacheInvalidate: (kind: string) => `brokkr.cache.invalidate.${token(kind, 'cache kind')}`,
  cacheInvalidateAll: 'brokkr.cache.invalidate.*',
  configReload: 'brokkr.config.reload',
  /** A telemetry frame for a stack's live subscribers (`/api/v1/stacks/{id}/live`) on every api replica. */
  liveStack: (stackId: string) => `brokkr.live.stack.${token(stackId, 'stack id')}`,
  liveStackAll: 'brokkr.live.stack.*',
  /** An agent's fleet record may have changed (heartbeat, channel connect/disconnect): `/api/v1/fleet/live` on every replica. */
  liveFleet: 'brokkr.live.fleet',
  /** An api replica says it is there (every few seconds): a write waits for its notices to reach the others only when there are some. */
  apiPresence: 'brokkr.api.presence',
} as const;
