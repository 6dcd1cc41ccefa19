/**
 * How long a claim is its holder's (acquired_until). When a lease runs out, anyone may take the
 * delivery back and send it again (counting the attempt that was in flight as interrupted). So a
 * lease must cover everything a live holder may still do with the row — otherwise a slow but
 * healthy holder is overtaken and the receiver gets a second POST — and not much more, since a
 * dead holder's rows wait that long. Both lengths grow with the subscription's timeout_seconds
 * (1..300), the longest a POST may take. The SQL below is the only place the claims compute them.
 */

/** Brokkr's lease, and the default of `BROKKR__BROKER__WEBHOOK_LEASE_SECONDS`. */
export const DEFAULT_LEASE_SECONDS = 60;

/**
 * After a dispatcher's POST ends: writing the outcome, with the dispatcher's three retries of a
 * failed write (0.2 + 1 + 3 s) and the statements themselves.
 */
export const DISPATCHER_RECORD_MARGIN_SECONDS = 10;

/**
 * How long after the claim an agent may still start a POST. An agent takes up to 10 deliveries
 * per claim and sends them a few at a time (ours 4 at once, and none later than 55 s after the
 * claim: it assumes this window; Brokkr's one at a time), so a POST may begin well after its claim.
 */
export const AGENT_START_WINDOW_SECONDS = 60;

/**
 * After an agent's POST ends: reporting it through the api. Our agent tries a report 3 times,
 * each call up to 10 s, with about 1.5 s of backoff in between.
 */
export const AGENT_REPORT_MARGIN_SECONDS = 30;

/**
 * Dispatcher: the POST starts right after the claim (a claim is sized to the replica's free
 * slots per endpoint), so timeout + margin covers it. The configured lease is a floor on top:
 * slack for a stalled event loop or a slow database, and Brokkr's 60 s by default.
 */
export function dispatcherLeaseSeconds(floorSeconds: number, timeoutSeconds: number): number {
  return Math.max(floorSeconds, timeoutSeconds + DISPATCHER_RECORD_MARGIN_SECONDS);
}

/** Agent: the start window, the POST, the report. 120 s for the default 30 s timeout. */
export function agentLeaseSeconds(timeoutSeconds: number): number {
  return AGENT_START_WINDOW_SECONDS + timeoutSeconds + AGENT_REPORT_MARGIN_SECONDS;
}

/** `dispatcherLeaseSeconds` as SQL over the joined subscription `s`; `floor` is a parameter like `$2`. */
export function dispatcherLeaseSql(floor: string): string {
  return `make_interval(secs => GREATEST(${floor}::int, s.timeout_seconds + ${DISPATCHER_RECORD_MARGIN_SECONDS}))`;
}

/** `agentLeaseSeconds` as SQL over the joined subscription `s`. */
export const AGENT_LEASE_SQL = `make_interval(secs => ${AGENT_START_WINDOW_SECONDS} + s.timeout_seconds + ${AGENT_REPORT_MARGIN_SECONDS})`;
