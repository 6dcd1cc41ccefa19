/** Brokkr's stack marker: an annotation (Brokkr) or, on what our agent applies, also a label. */
export const STACK_KEY = 'k8s.brokkr.io/stack';
/** A pod's opt-in to log streaming (exactly "true"). */
export const STREAM_LOGS_KEY = 'brokkr.io/stream-logs';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Meta {
  annotations?: Record<string, string> | undefined;
  labels?: Record<string, string> | undefined;
}

/** The stack an object belongs to (its own metadata only: the owner chain is not walked), or undefined. */
export function stackOf(meta: Meta | undefined): string | undefined {
  const value = meta?.annotations?.[STACK_KEY] ?? meta?.labels?.[STACK_KEY];
  return value && UUID.test(value) ? value.toLowerCase() : undefined;
}

export const streamsLogs = (meta: Meta | undefined) => meta?.annotations?.[STREAM_LOGS_KEY] === 'true';
