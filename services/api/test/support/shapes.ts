/** Wire shapes the api tests assert on. */

/** Timestamps are RFC 3339 UTC with a `Z` suffix (Brokkr's chrono "AutoSi"). */
export const RFC3339_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The event envelope published to BROKKR_EVENTS (Brokkr's webhook payload). */
export interface EventEnvelope {
  id: string;
  event_type: string;
  timestamp: string;
  data: Record<string, unknown>;
}
