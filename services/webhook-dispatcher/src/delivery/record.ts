import { sanitizeErrorText } from '@brokkr/crypto';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { recordDead, recordRetry, recordSuccess, type ClaimedDelivery, type Decision } from '@brokkr/webhook-deliveries';
import type { RecordDeliveryFailed } from '../audit.ts';

export interface RecordDeps {
  db: Queryable;
  logger: Logger;
  auditDead: RecordDeliveryFailed;
  /** A retry is due in this many seconds: wake the loop then. */
  retryDueIn(seconds: number): void;
}

const RETRY_DELAYS_MS = [200, 1000, 3000];

/**
 * A lost write here would leave the row acquired until its lease ends and then send it again, so
 * a failing write is retried a few times before giving up to that fallback.
 */
async function withRetries<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const delay = RETRY_DELAYS_MS[i];
      if (delay === undefined) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * The error text as stored and audited: without the endpoint (the URL is encrypted at rest, its
 * host:port must not sit next to it in clear), control characters or unbounded length. A NUL
 * from a receiver's body would otherwise make the UPDATE itself fail.
 */
function storable(decision: Decision, url: string | undefined): Decision {
  if (decision.kind === 'success') return decision;
  return { ...decision, error: sanitizeErrorText(decision.error, { endpoints: [url] }) };
}

/**
 * Writes one attempt's outcome; false when the claim was no longer ours (nothing written).
 * `url` is the target, removed from the stored error text.
 */
export async function recordDecision(deps: RecordDeps, row: ClaimedDelivery, outcome: Decision, url?: string): Promise<boolean> {
  const claim = { id: row.id, lease: row.lease };
  const decision = storable(outcome, url);
  let written: boolean;
  try {
    written = await withRetries(async () => {
      if (decision.kind === 'success') return recordSuccess(deps.db, claim);
      if (decision.kind === 'retry') return recordRetry(deps.db, claim, decision);
      return recordDead(deps.db, claim, decision.error);
    });
  } catch (err) {
    deps.logger.error(
      { err, deliveryId: row.id, outcome: decision.kind },
      'outcome not recorded; the delivery will be retried after its lease',
    );
    return false;
  }
  if (!written) {
    deps.logger.warn(
      { deliveryId: row.id, outcome: decision.kind },
      'claim lost before the outcome was recorded (lease expired and taken over)',
    );
    return false;
  }
  if (decision.kind === 'retry') deps.retryDueIn(decision.delaySeconds);
  if (decision.kind === 'dead') {
    await deps.auditDead({
      subscriptionId: row.subscription_id,
      deliveryId: row.id,
      eventId: row.event_id,
      eventType: row.event_type,
      attempts: row.attempts + 1,
      lastError: decision.error,
    });
  }
  return true;
}

/**
 * A row the claim itself settled dead (its attempts, an interrupted one included, had reached
 * max_retries): nothing is sent, the end is audited like any other dead delivery.
 */
export async function auditSettledAtClaim(deps: Pick<RecordDeps, 'logger' | 'auditDead'>, row: ClaimedDelivery): Promise<void> {
  deps.logger.warn(
    { deliveryId: row.id, attempts: row.attempts },
    'delivery dead: its attempts were used up (the last one was interrupted)',
  );
  try {
    await deps.auditDead({
      subscriptionId: row.subscription_id,
      deliveryId: row.id,
      eventId: row.event_id,
      eventType: row.event_type,
      attempts: row.attempts,
      lastError: row.last_error ?? 'attempts used up',
    });
  } catch (err) {
    deps.logger.error({ err, deliveryId: row.id }, 'audit of a dead delivery failed');
  }
}
