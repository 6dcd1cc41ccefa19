import type { SubscriptionRow } from '../../domain/webhook-subscriptions.ts';

type Filters = { agent_id?: string; stack_id?: string };

/**
 * The stored filter text as the API shows it: only the keys that are evaluated; a row whose text
 * cannot be read (it then matches nothing) shows `null`, as in Brokkr.
 */
export function filtersForResponse(text: string | null): Filters | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const out: Filters = {};
  const record = value as Record<string, unknown>;
  if (typeof record.agent_id === 'string') out.agent_id = record.agent_id;
  if (typeof record.stack_id === 'string') out.stack_id = record.stack_id;
  return out;
}

/** How filters are stored: only the set fields (`{}` admits every event). */
export function filtersForStorage(filters: { agent_id?: string | null | undefined; stack_id?: string | null | undefined }): string {
  const out: Filters = {};
  if (filters.agent_id) out.agent_id = filters.agent_id.toLowerCase();
  if (filters.stack_id) out.stack_id = filters.stack_id.toLowerCase();
  return JSON.stringify(out);
}

export function webhookResponse(row: SubscriptionRow) {
  return {
    id: row.id,
    name: row.name,
    has_url: row.has_url,
    has_auth_header: row.has_auth_header,
    event_types: row.event_types,
    filters: filtersForResponse(row.filters),
    target_labels: row.target_labels,
    enabled: row.enabled,
    max_retries: row.max_retries,
    timeout_seconds: row.timeout_seconds,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by: row.created_by,
  };
}
