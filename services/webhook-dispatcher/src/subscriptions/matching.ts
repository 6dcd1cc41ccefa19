/**
 * Brokkr's subscription matching, evaluated in memory against the cached
 * enabled subscriptions: an event-type pattern, then the filters.
 */

/** `*` matches everything, `prefix.*` every type starting with `prefix.`, anything else exactly. */
export function patternMatches(pattern: string, eventType: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return eventType.startsWith(pattern.slice(0, -1));
  return pattern === eventType;
}

export function anyPatternMatches(patterns: readonly string[], eventType: string): boolean {
  return patterns.some((p) => patternMatches(p, eventType));
}

export type EventFilter = (data: Record<string, unknown>) => boolean;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FILTER_FIELDS = ['agent_id', 'stack_id'] as const;

const admitAll: EventFilter = () => true;
// Brokkr fails closed: a filter it cannot read delivers nothing rather than everything.
const admitNone: EventFilter = () => false;

function parseFilterJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The required (field, lower-case uuid) pairs, or undefined when a set field is not a UUID. */
function requiredFields(filters: Record<string, unknown>): [string, string][] | undefined {
  const required: [string, string][] = [];
  for (const field of FILTER_FIELDS) {
    const want = filters[field];
    if (want === undefined || want === null) continue;
    if (typeof want !== 'string' || !UUID.test(want)) return undefined;
    required.push([field, want.toLowerCase()]);
  }
  return required;
}

/**
 * Compiles the stored `filters` text once per cache load. NULL, blank or `{}` admits every event;
 * otherwise every set field must equal `data.<field>` as a UUID (missing or null ⇒ no match).
 */
export function compileFilter(filters: string | null): EventFilter {
  if (filters === null || filters.trim() === '') return admitAll;
  const parsed = parseFilterJson(filters);
  if (!parsed) return admitNone;
  const required = requiredFields(parsed);
  if (!required) return admitNone;
  if (required.length === 0) return admitAll;
  return (data) =>
    required.every(([field, want]) => {
      const have = data[field];
      return typeof have === 'string' && UUID.test(have) && have.toLowerCase() === want;
    });
}
