import { context, propagation, SpanKind, trace, type Span } from '@opentelemetry/api';
import type { WebhookKey } from '@brokkr/crypto';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { claimForDispatcher, decide, releaseClaims, type ClaimedDelivery, type RetrySettings } from '@brokkr/webhook-deliveries';
import type { RecordDeliveryFailed } from '../audit.ts';
import type { DispatcherMetrics } from '../metrics.ts';
import { attemptPost } from './attempt.ts';
import type { EndpointCapacity } from './capacity.ts';
import type { WebhookHttpClient } from './http-client.ts';
import { prepareDelivery, requestHeaders, type PreparedDelivery } from './prepare.ts';
import { auditSettledAtClaim, recordDecision } from './record.ts';
import { createWakeTimer, type WakeTimer } from './wake-timer.ts';

export interface DeliveryLoopOptions {
  db: Queryable;
  key: WebhookKey;
  client: WebhookHttpClient;
  capacity: EndpointCapacity;
  logger: Logger;
  metrics: DispatcherMetrics;
  auditDead: RecordDeliveryFailed;
  batchSize: number;
  /** The lease's floor (BROKKR__BROKER__WEBHOOK_LEASE_SECONDS); the claim stretches it to cover the POST. */
  leaseFloorSeconds: number;
  /** Poll this often even without a wake-up. */
  intervalMs: number;
  retry: RetrySettings;
}

export interface DeliveryLoop {
  /** Due deliveries may exist: claim now (coalesced with a claim already running). */
  wake(): void;
  /** Stops claiming, lets in-flight POSTs finish for up to `graceMs`, then aborts and releases the rest. */
  stop(graceMs?: number): Promise<void>;
}

const tracer = trace.getTracer('brokkr-webhook-dispatcher');

/**
 * Step 2 of a webhook: claim due rows (one statement, SKIP LOCKED + lease), POST each outside any
 * transaction, record the outcome with a fenced UPDATE. Concurrency is bounded per replica and
 * per endpoint by `capacity`.
 */
export function startDeliveryLoop(o: DeliveryLoopOptions): DeliveryLoop {
  const loop = new ClaimingDeliveryLoop(o);
  loop.start();
  return { wake: () => loop.wake(), stop: (graceMs) => loop.stop(graceMs) };
}

type Decision = Parameters<typeof recordDecision>[2];

class ClaimingDeliveryLoop {
  private readonly logger: Logger;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private readonly timer: WakeTimer;
  private stopping = false;
  private running: Promise<void> | undefined;
  private again = false;
  /** Set when the last claim may have left due rows behind (full batch, or endpoints at their limit). */
  private mayHaveMore = false;

  constructor(private readonly o: DeliveryLoopOptions) {
    this.logger = o.logger.child({ component: 'delivery' });
    this.timer = createWakeTimer(() => this.wake(), o.intervalMs);
  }

  start(): void {
    this.timer.start();
    this.wake();
  }

  /** Claims now, or once the claim already running is done. */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.claimUntilDry()
      .catch((err: unknown) => this.logger.error({ err }, 'claiming deliveries failed; retrying at the next wake-up'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    this.timer.stop();
    await this.running;
    const grace = setTimeout(() => this.shutdown.abort(), graceMs);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(grace);
  }

  private async claimUntilDry(): Promise<void> {
    for (;;) {
      const room = Math.min(this.o.batchSize, this.o.capacity.free());
      if (this.stopping || room === 0) {
        this.mayHaveMore = true;
        return;
      }
      const claimed = await this.claimOnce(room);
      if (claimed < room) return;
    }
  }

  /** One claim of up to `room` rows; returns how many were claimed, or 0 when all went back (endpoints busy). */
  private async claimOnce(room: number): Promise<number> {
    const { db, capacity, leaseFloorSeconds } = this.o;
    const roomBySubscription = capacity.roomBySubscription();
    const rows = await claimForDispatcher(db, { limit: room, leaseFloorSeconds, roomBySubscription, defaultRoom: capacity.defaultRoom });
    const overflow = this.startAll(rows);
    if (overflow.length > 0) {
      this.o.metrics.attempts.inc({ outcome: 'released' }, overflow.length);
      await releaseClaims(db, overflow);
    }
    // Rows may have been left behind if any were found (beyond this batch or a subscription's
    // room) or if a busy endpoint was skipped: the next completion claims again. A claim that
    // finds nothing with every endpoint free ends the chain.
    this.mayHaveMore = rows.length > 0 || [...roomBySubscription.values()].some((n) => n === 0);
    return overflow.length === rows.length ? 0 : rows.length;
  }

  /** Starts every row its endpoint has room for; returns the rows to hand back. */
  private startAll(rows: ClaimedDelivery[]): ClaimedDelivery[] {
    const overflow: ClaimedDelivery[] = [];
    for (const row of rows) {
      if (row.status === 'dead') {
        // Its budget was spent (an interrupted attempt included): the claim settled it.
        this.track(auditSettledAtClaim({ logger: this.logger, auditDead: this.o.auditDead }, row));
        continue;
      }
      const prepared = prepareDelivery(this.o.key, row);
      if (!prepared.ok) {
        if (prepared.reason === 'decrypt') this.o.metrics.decryptFailures.inc({ field: prepared.field, path: 'webhook-dispatcher' });
        this.track(this.finish(row, { kind: 'dead', error: prepared.error }, 'dead'));
      } else if (this.o.capacity.tryAcquire(row.subscription_id, prepared.value.host)) {
        this.track(this.deliver(row, prepared.value));
      } else {
        overflow.push(row);
      }
    }
    return overflow;
  }

  private track(task: Promise<void>): void {
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  private async finish(row: ClaimedDelivery, decision: Decision, outcome: string, url?: string): Promise<void> {
    const deps = {
      db: this.o.db,
      logger: this.logger,
      auditDead: this.o.auditDead,
      retryDueIn: (s: number) => this.timer.at(Date.now() + s * 1000),
    };
    const ok = await recordDecision(deps, row, decision, url);
    this.o.metrics.attempts.inc({ outcome: ok ? outcome : 'lost' });
  }

  private async deliver(row: ClaimedDelivery, prepared: PreparedDelivery): Promise<void> {
    this.o.metrics.inFlight.inc();
    try {
      const span = { kind: SpanKind.CLIENT, attributes: { 'brokkr.delivery_id': row.id } };
      await tracer.startActiveSpan(`POST ${prepared.host}`, span, (s) => this.post(row, prepared, s));
    } finally {
      this.o.metrics.inFlight.dec();
      this.o.capacity.release(prepared.host);
      if (this.mayHaveMore) this.wake();
    }
  }

  /** The POST (inside its span), then the decision recorded, or the row handed back when shutdown cut it short. */
  private async post(row: ClaimedDelivery, prepared: PreparedDelivery, span: Span): Promise<void> {
    const started = performance.now();
    const headers = requestHeaders(row, prepared);
    propagation.inject(context.active(), headers);
    const timeoutMs = row.timeout_seconds * 1000;
    const result = await attemptPost(this.o.client, {
      url: prepared.url,
      headers,
      body: row.payload,
      timeoutMs,
      signal: this.shutdown.signal,
    });
    span.end();
    if (this.shutdown.signal.aborted) return this.releaseCutShort(row);
    const decision = decide(result, row.attempts, row.max_retries, this.o.retry);
    this.o.metrics.attemptDuration.observe({ outcome: decision.kind }, (performance.now() - started) / 1000);
    await this.finish(row, decision, decision.kind, prepared.url);
  }

  /**
   * Cut short by shutdown: not the receiver's fault, hand the row back for another replica.
   * The POST was under way (the receiver may have it), so it counts as an attempt.
   */
  private async releaseCutShort(row: ClaimedDelivery): Promise<void> {
    await releaseClaims(this.o.db, [row], { attempted: true }).catch((err: unknown) =>
      this.logger.warn({ err, deliveryId: row.id }, 'release failed; the lease will expire'),
    );
    this.o.metrics.attempts.inc({ outcome: 'released' });
  }
}
