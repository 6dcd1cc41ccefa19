/** Brokkr's event envelope as the api publishes it on `brokkr.events.<event_type>`. */
export interface EventEnvelope {
  id: string;
  event_type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Undefined when the message can never become a delivery (it is then terminated, not retried). */
export function parseEnvelope(text: string): EventEnvelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const { id, event_type: eventType, timestamp, data } = value;
  if (typeof id !== 'string' || !UUID.test(id)) return undefined;
  if (typeof eventType !== 'string' || eventType.length === 0 || eventType.length > 100) return undefined;
  if (typeof timestamp !== 'string' || !isObject(data)) return undefined;
  return { id, event_type: eventType, timestamp, data };
}

/** The stored payload and request body: Brokkr's field order, nothing else. */
export function serializeEnvelope(e: EventEnvelope): string {
  return JSON.stringify({ id: e.id, event_type: e.event_type, timestamp: e.timestamp, data: e.data });
}
