// The webhook-delivery state machine (README.md): one SQL module per transition, the retry
// policy and the lease lengths. The dispatcher, the api and maintenance import only this file.
export { DELIVERY_COLUMNS, type DeliveryRow, type DeliveryStatus } from './delivery-row.ts';
export { INTERRUPTED_AGENT_SILENT, INTERRUPTED_BY_SHUTDOWN, INTERRUPTED_LEASE_EXPIRED } from './interrupted.ts';
export {
  AGENT_REPORT_MARGIN_SECONDS,
  AGENT_START_WINDOW_SECONDS,
  DEFAULT_LEASE_SECONDS,
  DISPATCHER_RECORD_MARGIN_SECONDS,
  agentLeaseSeconds,
  dispatcherLeaseSeconds,
} from './lease.ts';
export {
  afterFailure,
  backoffSeconds,
  decide,
  isRetryableReport,
  isRetryableStatus,
  parseRetryAfter,
  type AfterFailure,
  type AttemptResult,
  type Decision,
  type FailedAttempt,
  type RetrySettings,
} from './retry-policy.ts';
export type { AgentClaim, LeaseClaim } from './sql/fences.ts';
export { insertDeliveries, type NewDelivery } from './sql/insert-deliveries.ts';
export { claimForDispatcher, type ClaimedDelivery, type ClaimOptions } from './sql/claim-for-dispatcher.ts';
export { claimForAgent, type AgentClaimedDelivery } from './sql/claim-for-agent.ts';
export { recordAgentSuccess, recordSuccess, type RecordedResult } from './sql/record-success.ts';
export { recordAgentFailure, recordAgentUndeliverable, recordDead, recordRetry } from './sql/record-failure.ts';
export { releaseClaims } from './sql/release-claims.ts';
export { releaseExpiredLeases } from './sql/release-expired-leases.ts';
export { requeueDueRetries } from './sql/requeue-due-retries.ts';
export { redeliver } from './sql/redeliver.ts';
export { deleteFinishedDeliveries } from './sql/delete-finished.ts';
