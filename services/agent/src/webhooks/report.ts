import { BrokerError } from '../broker/http.ts';
import { backoffDelay, sleep } from '../util/async.ts';
import type { WebhookBrokerApi } from './broker-api.ts';
import type { DeliveryReport } from './types.ts';

const ATTEMPTS = 3;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 4000;

/**
 * Posts a delivery's result, retrying a broker that did not answer or answered 429/5xx a few
 * times. After that (or on a refusal such as 403 `delivery_not_acquired_by_agent`) it gives up:
 * the delivery stays claimed until its lease runs out and the broker offers it again, so a lost
 * report costs a duplicate POST, never a lost delivery. Once `stopping` is set no retry starts.
 */
export async function reportResult(
  api: WebhookBrokerApi,
  deliveryId: string,
  report: DeliveryReport,
  stopping: AbortSignal,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await api.report(deliveryId, report);
      return;
    } catch (err) {
      const retry = err instanceof BrokerError && err.transient && attempt < ATTEMPTS && !stopping.aborted;
      if (!retry) throw err;
      await sleep(backoffDelay(attempt, BACKOFF_BASE_MS, BACKOFF_MAX_MS), stopping);
    }
  }
}
