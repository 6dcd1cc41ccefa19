/** A diagnostic_requests row as the API serializes it (the v1 DiagnosticRequest). */
export interface DiagnosticRequestRow {
  id: string;
  agent_id: string;
  deployment_object_id: string;
  status: string;
  requested_by: string | null;
  created_at: Date;
  claimed_at: Date | null;
  completed_at: Date | null;
  expires_at: Date;
}

export const DIAGNOSTIC_REQUEST_COLUMNS =
  'id, agent_id, deployment_object_id, status, requested_by, created_at, claimed_at, completed_at, expires_at';

/** A diagnostic_results row (the v1 DiagnosticResult; the three payloads are JSON strings, stored as sent). */
export interface DiagnosticResultRow {
  id: string;
  request_id: string;
  pod_statuses: string;
  events: string;
  log_tails: string | null;
  collected_at: Date;
  created_at: Date;
}

export const DIAGNOSTIC_RESULT_COLUMNS = 'id, request_id, pod_statuses, events, log_tails, collected_at, created_at';
