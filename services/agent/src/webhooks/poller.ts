import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import { Agent } from 'undici';
import { errorMessage, mapLimit, Wakeup } from '../util/async.ts';
import { WebhookBrokerApi } from './broker-api.ts';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.ts';
import { reportResult } from './report.ts';
import { sendDelivery } from './send.ts';
import type { PendingWebhookDelivery } from './types.ts';

export interface WebhookPollerDeps {
  brokerUrl: string;
  pak: string;
  agentId: string;
  intervalMs: number;
  registry: Registry;
  logger: Logger;
  userAgent: string;
  isActive(): boolean;
}

/** The broker hands out at most this many per claim: a full batch means more are waiting. */
const CLAIM_LIMIT = 10;
/** POSTs in flight at once (Brokkr's agent sends one at a time). */
const CONCURRENCY = 4;
/**
 * The broker's lease on a claimed delivery. One whose turn comes later than this (minus a margin)
 * is not sent: the broker may already have offered it to another agent.
 */
const LEASE_MS = 60_000;
const LEASE_MARGIN_MS = 5_000;
/** After a stop, POSTs in flight get this long (their reports fit in the agent's shutdown deadline). */
const DRAIN_GRACE_MS = 15_000;

/**
 * Agent-delivered webhooks: every interval, and again at once after a full
 * batch, claim pending deliveries and POST each one to its endpoint, then report the outcome.
 * Only while the agent is ACTIVE. A stop lets POSTs in flight finish and report (within the
 * grace); deliveries not started yet are left to the lease.
 */
export class WebhookPoller {
  private readonly wake = new Wakeup();
  private readonly api: WebhookBrokerApi;
  private readonly metrics: WebhookMetrics;
  // Receivers get their own pool: a slow endpoint never holds a broker connection.
  private readonly receivers = new Agent({ keepAliveTimeout: 10_000, connections: CONCURRENCY });

  constructor(private readonly deps: WebhookPollerDeps) {
    this.api = new WebhookBrokerApi(deps.brokerUrl, deps.pak);
    this.metrics = createWebhookMetrics(deps.registry);
  }

  /** Poll now (e.g. the agent just became ACTIVE). */
  poke(): void {
    this.wake.notify();
  }

  async run(stop: AbortSignal): Promise<void> {
    const sends = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    const onStop = () => (grace = setTimeout(() => sends.abort(), DRAIN_GRACE_MS));
    stop.addEventListener('abort', onStop, { once: true });
    try {
      while (!stop.aborted) {
        const full = this.deps.isActive() && (await this.pass(stop, sends.signal));
        if (!full) await this.wake.wait(this.deps.intervalMs, stop);
      }
    } finally {
      clearTimeout(grace);
      stop.removeEventListener('abort', onStop);
      await Promise.allSettled([this.receivers.close(), this.api.close()]);
    }
  }

  /** One claim and its deliveries; true when the batch was full (more may be waiting). */
  private async pass(stop: AbortSignal, sends: AbortSignal): Promise<boolean> {
    const claimedAt = Date.now();
    let batch: PendingWebhookDelivery[];
    try {
      batch = await this.api.pending(this.deps.agentId, stop);
    } catch (err) {
      if (stop.aborted) return false;
      this.metrics.polls.inc({ status: 'error' });
      this.deps.logger.warn({ err: errorMessage(err) }, 'could not claim pending webhook deliveries');
      return false;
    }
    this.metrics.polls.inc({ status: batch.length > 0 ? 'claimed' : 'empty' });
    if (batch.length === 0) return false;
    this.deps.logger.debug({ count: batch.length }, 'webhook deliveries claimed');
    await mapLimit(batch, CONCURRENCY, (d) => this.deliver(d, claimedAt, { stop, sends }));
    return batch.length >= CLAIM_LIMIT && !stop.aborted;
  }

  private async deliver(
    delivery: PendingWebhookDelivery,
    claimedAt: number,
    signals: { stop: AbortSignal; sends: AbortSignal },
  ): Promise<void> {
    const log = this.deps.logger.child({ deliveryId: delivery.id, eventType: delivery.event_type });
    if (signals.stop.aborted || Date.now() > claimedAt + LEASE_MS - LEASE_MARGIN_MS) {
      this.metrics.deliveries.inc({ outcome: 'skipped' });
      log.info({ stopping: signals.stop.aborted }, 'webhook delivery not started; the broker offers it again when its lease ends');
      return;
    }
    const result = await sendDelivery(delivery, { dispatcher: this.receivers, signal: signals.sends, userAgent: this.deps.userAgent });
    this.metrics.deliveries.inc({ outcome: result.outcome });
    if (result.outcome === 'skipped') {
      log.warn('webhook delivery cut off by shutdown; the broker offers it again when its lease ends');
      return;
    }
    const { report } = result;
    if (report.success) log.debug({ status: report.status_code, durationMs: report.duration_ms }, 'webhook delivered');
    else log.info({ status: report.status_code, error: report.error, attempts: delivery.attempts + 1 }, 'webhook delivery failed');
    try {
      await reportResult(this.api, delivery.id, report, signals.stop);
      this.metrics.reports.inc({ status: 'success' });
    } catch (err) {
      this.metrics.reports.inc({ status: 'error' });
      log.warn({ err: errorMessage(err) }, 'webhook result not recorded; the broker offers the delivery again when its lease ends');
    }
  }
}
