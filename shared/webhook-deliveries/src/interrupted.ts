/**
 * last_error of an attempt whose outcome was never recorded. Every attempt counts against
 * max_retries, an interrupted one too: the receiver may well have got it, and a delivery that
 * keeps killing its sender must end.
 */

/** A dispatcher's lease expired; taken back by a dispatcher's claim or the maintenance reaper. */
export const INTERRUPTED_LEASE_EXPIRED =
  'Request interrupted: the lease expired before the outcome was recorded (the sender stopped or lost the database)';

/** An agent's lease expired without a report; taken back by an agent's claim. */
export const INTERRUPTED_AGENT_SILENT = 'Request interrupted: the lease expired before the agent reported an outcome';

/** A dispatcher stopping cut its POST short and handed the row back. */
export const INTERRUPTED_BY_SHUTDOWN = 'Request interrupted: the dispatcher stopped before the receiver answered';
