import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
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
import { createWakeTimer } from './wake-timer.ts';

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
  const logger = o.logger.child({ component: 'delivery' });
  const inFlight = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let stopping = false;
  let running: Promise<void> | undefined;
  let again = false;
  // Set when the last claim may have left due rows behind (full batch, or endpoints at their limit).
  let mayHaveMore = false;

  const timer = createWakeTimer(() => wake(), o.intervalMs);

  function wake(): void {
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    running = claimUntilDry()
      .catch((err: unknown) => logger.error({ err }, 'claiming deliveries failed; retrying at the next wake-up'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  async function claimUntilDry(): Promise<void> {
    for (;;) {
      const room = Math.min(o.batchSize, o.capacity.free());
      if (stopping || room === 0) {
        mayHaveMore = true;
        return;
      }
      const roomBySubscription = o.capacity.roomBySubscription();
      const rows = await claimForDispatcher(o.db, {
        limit: room,
        leaseFloorSeconds: o.leaseFloorSeconds,
        roomBySubscription,
        defaultRoom: o.capacity.defaultRoom,
      });
      const overflow = startAll(rows);
      if (overflow.length > 0) {
        o.metrics.attempts.inc({ outcome: 'released' }, overflow.length);
        await releaseClaims(o.db, overflow);
      }
      // Rows may have been left behind if any were found (beyond this batch or a subscription's
      // room) or if a busy endpoint was skipped: the next completion claims again. A claim that
      // finds nothing with every endpoint free ends the chain.
      mayHaveMore = rows.length > 0 || [...roomBySubscription.values()].some((n) => n === 0);
      if (rows.length < room || overflow.length === rows.length) return;
    }
  }

  /** Starts every row its endpoint has room for; returns the rows to hand back. */
  function startAll(rows: ClaimedDelivery[]): ClaimedDelivery[] {
    const overflow: ClaimedDelivery[] = [];
    for (const row of rows) {
      if (row.status === 'dead') {
        // Its budget was spent (an interrupted attempt included): the claim settled it.
        track(auditSettledAtClaim({ logger, auditDead: o.auditDead }, row));
        continue;
      }
      const prepared = prepareDelivery(o.key, row);
      if (!prepared.ok) {
        if (prepared.reason === 'decrypt') o.metrics.decryptFailures.inc({ field: prepared.field, path: 'webhook-dispatcher' });
        track(finish(row, { kind: 'dead', error: prepared.error }, 'dead'));
      } else if (o.capacity.tryAcquire(row.subscription_id, prepared.value.host)) {
        track(deliver(row, prepared.value));
      } else {
        overflow.push(row);
      }
    }
    return overflow;
  }

  function track(task: Promise<void>): void {
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  }

  async function finish(
    row: ClaimedDelivery,
    decision: Parameters<typeof recordDecision>[2],
    outcome: string,
    url?: string,
  ): Promise<void> {
    const deps = { db: o.db, logger, auditDead: o.auditDead, retryDueIn: (s: number) => timer.at(Date.now() + s * 1000) };
    const ok = await recordDecision(deps, row, decision, url);
    o.metrics.attempts.inc({ outcome: ok ? outcome : 'lost' });
  }

  async function deliver(row: ClaimedDelivery, prepared: PreparedDelivery): Promise<void> {
    o.metrics.inFlight.inc();
    const started = performance.now();
    try {
      await tracer.startActiveSpan(
        `POST ${prepared.host}`,
        { kind: SpanKind.CLIENT, attributes: { 'brokkr.delivery_id': row.id } },
        async (span) => {
          const headers = requestHeaders(row, prepared);
          propagation.inject(context.active(), headers);
          const result = await attemptPost(o.client, {
            url: prepared.url,
            headers,
            body: row.payload,
            timeoutMs: row.timeout_seconds * 1000,
            signal: shutdown.signal,
          });
          span.end();
          if (shutdown.signal.aborted) {
            // Cut short by shutdown: not the receiver's fault, hand the row back for another replica.
            // The POST was under way (the receiver may have it), so it counts as an attempt.
            await releaseClaims(o.db, [row], { attempted: true }).catch((err: unknown) =>
              logger.warn({ err, deliveryId: row.id }, 'release failed; the lease will expire'),
            );
            o.metrics.attempts.inc({ outcome: 'released' });
            return;
          }
          const decision = decide(result, row.attempts, row.max_retries, o.retry);
          o.metrics.attemptDuration.observe({ outcome: decision.kind }, (performance.now() - started) / 1000);
          await finish(row, decision, decision.kind, prepared.url);
        },
      );
    } finally {
      o.metrics.inFlight.dec();
      o.capacity.release(prepared.host);
      if (mayHaveMore) wake();
    }
  }

  timer.start();
  wake();

  return {
    wake,
    async stop(graceMs = 15_000) {
      stopping = true;
      timer.stop();
      await running;
      const grace = setTimeout(() => shutdown.abort(), graceMs);
      await Promise.allSettled([...inFlight]);
      clearTimeout(grace);
    },
  };
}
