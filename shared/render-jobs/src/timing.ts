/**
 * How long the queue's promises last. The lease and the liveness window are computed here only.
 */

/**
 * After a render's wall-clock limit: loading the source before it and writing the result after it.
 * A renderer that is alive never outlives its lease (its render is killed at the limit), so a job
 * whose lease ran out has lost its renderer and may be claimed again.
 */
export const LEASE_MARGIN_SECONDS = 5;

export function leaseSeconds(renderTimeoutSeconds: number): number {
  return renderTimeoutSeconds + LEASE_MARGIN_SECONDS;
}

/** How often a renderer refreshes its row in `renderers`. */
export const HEARTBEAT_SECONDS = 5;

/** A renderer not seen for this long counts as gone (three heartbeats missed). */
export const ALIVE_SECONDS = 3 * HEARTBEAT_SECONDS;

/**
 * A job older than this has nobody waiting for it any more (the api waits at most 300 s,
 * BROKKR__BROKER__RENDER_WAIT_SECONDS), only an api that died before it left: its row is deleted.
 */
export const ABANDONED_AFTER_SECONDS = 600;

/** Rows past ABANDONED_AFTER_SECONDS deleted per statement. */
export const ABANDONED_BATCH = 1000;
