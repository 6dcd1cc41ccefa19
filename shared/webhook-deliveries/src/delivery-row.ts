/** The states of a webhook_deliveries row; README.md has the diagram. */
export type DeliveryStatus = 'pending' | 'acquired' | 'success' | 'failed' | 'dead';

/** A webhook_deliveries row as the admin API shows it. */
export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_type: string;
  event_id: string;
  payload: string;
  target_labels: string[] | null;
  status: DeliveryStatus;
  acquired_by: string | null;
  acquired_until: Date | null;
  attempts: number;
  last_attempt_at: Date | null;
  next_retry_at: Date | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export const DELIVERY_COLUMNS = `id, subscription_id, event_type, event_id, payload, target_labels, status, acquired_by, acquired_until,
  attempts, last_attempt_at, next_retry_at, last_error, created_at, completed_at`;
