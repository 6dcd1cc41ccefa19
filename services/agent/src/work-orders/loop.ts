import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import { refusalMessage, type Refusal } from '@brokkr/trust';
import type { CompleteWorkOrder, WorkOrder } from '@brokkr/contracts';
import type { ApplyContext } from '../reconcile/apply-stack.ts';
import { errorMessage } from '../util/async.ts';
import { PendingLoop } from '../util/pending-loop.ts';
import { postResult } from '../util/post-result.ts';
import { WorkOrderBrokerApi } from './broker-api.ts';
import { runBuild } from './build.ts';
import type { WorkOrderContext } from './context.ts';
import { runCustom } from './custom.ts';
import { isTransient, WorkOrderAborted, WorkOrderError } from './errors.ts';
import { createWorkOrderMetrics, workTypeLabel, type WorkOrderMetrics } from './metrics.ts';

export interface WorkOrderLoopDeps {
  brokerUrl: string;
  pak: string;
  agentId: string;
  /** At most this many orders run at once (≥ 1). */
  concurrency: number;
  pollingIntervalMs: number;
  /** How long our broker may hold the pending request; 0 = plain polling. */
  longPollWaitSeconds: number;
  /** The apply machinery, with an empty inventory (work orders never prune). */
  apply: ApplyContext;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
  /** Job/BuildRun poll period (tests shorten it). */
  kubePollMs?: number;
  /** With a trust policy: why an order must not run (unsigned, not for this agent, expired, run before), checked before it runs. */
  trust?: { workOrderRefusal(order: WorkOrder): Promise<Refusal | undefined> } | undefined;
}

type Runner = (ctx: WorkOrderContext, order: WorkOrder) => Promise<string | null>;
const RUNNERS: Record<string, Runner> = { custom: runCustom, build: runBuild };

/** After a stop, orders in flight get this long to finish and report (inside the agent's 25 s shutdown deadline). */
const DRAIN_GRACE_MS = 15_000;
const KUBE_POLL_MS = 2000;

/**
 * Work orders: claim pending orders — woken at once by the broker's long-poll,
 * else every polling interval — run them (at most `concurrency` at once), and complete them with an
 * honest `retryable`. Only while the agent is ACTIVE. No local state: the broker's claim
 * compare-and-set decides who runs an order, so a restart never runs a completed order again. A
 * stop makes no new claim and lets orders in flight finish within the grace; one cut off is not
 * completed and comes back through the broker's stale-claim release.
 */
export class WorkOrderLoop {
  private readonly api: WorkOrderBrokerApi;
  private readonly metrics: WorkOrderMetrics;
  private readonly running = new Map<string, Promise<void>>();
  private readonly loop: PendingLoop<WorkOrder>;
  /** Aborted when the drain grace after a stop runs out: orders still running are cut off. */
  private readonly orders = new AbortController();

  constructor(private readonly deps: WorkOrderLoopDeps) {
    this.api = new WorkOrderBrokerApi(deps.brokerUrl, deps.pak);
    this.metrics = createWorkOrderMetrics(deps.registry);
    this.loop = new PendingLoop({
      pollingIntervalMs: deps.pollingIntervalMs,
      isActive: () => deps.isActive(),
      list: (signal) => this.api.pending(deps.agentId, deps.longPollWaitSeconds, signal),
      take: (candidate) => this.take(candidate.id),
      listFailed: (err) => deps.logger.warn({ err: errorMessage(err) }, 'could not list pending work orders'),
      // A slot coming free wakes the loop; it need not cut a held long-poll short.
      wakeCutsListing: false,
      full: () => this.running.size >= deps.concurrency,
    });
  }

  /** Look now (e.g. the agent just became ACTIVE). */
  poke(): void {
    this.loop.wake();
  }

  async run(stop: AbortSignal): Promise<void> {
    try {
      await this.loop.run(stop);
    } finally {
      await this.drain();
      await this.api.close().catch(() => undefined);
    }
  }

  /** Waits for the orders in flight, then cuts off what is left after the grace. */
  private async drain(): Promise<void> {
    if (this.running.size === 0) return;
    this.deps.logger.info({ running: [...this.running.keys()] }, 'waiting for work orders in flight');
    const grace = setTimeout(() => this.orders.abort(), DRAIN_GRACE_MS);
    await Promise.allSettled(this.running.values());
    clearTimeout(grace);
  }

  /** Claims one listed order and starts it in a free slot; the loop takes as many as there are slots. */
  private async take(id: string): Promise<boolean> {
    if (this.running.has(id)) return false;
    const claimedAt = Date.now();
    const order = await this.claim(id);
    if (!order) return false;
    const task = this.execute(order, claimedAt, this.orders.signal).finally(() => {
      this.running.delete(order.id);
      this.loop.wake();
    });
    this.running.set(order.id, task);
    return true;
  }

  private async claim(id: string): Promise<WorkOrder | undefined> {
    try {
      const order = await this.api.claim(id, this.deps.agentId);
      if (!order) this.deps.logger.debug({ workOrderId: id }, 'work order not claimable (another agent got it)');
      return order;
    } catch (err) {
      this.deps.logger.warn({ workOrderId: id, err: errorMessage(err) }, 'work order claim failed');
      return undefined;
    }
  }

  private async execute(order: WorkOrder, claimedAt: number, signal: AbortSignal): Promise<void> {
    const workType = workTypeLabel(order.work_type);
    const log = this.deps.logger.child({ workOrderId: order.id, workType: order.work_type });
    this.metrics.claimed.inc({ work_type: workType });
    log.info({ retryCount: order.retry_count }, 'work order claimed');
    const result = await this.outcome(order, { apply: this.deps.apply, claimedAt, signal, pollMs: this.deps.kubePollMs ?? KUBE_POLL_MS });
    if (!result) {
      this.metrics.abandoned.inc({ work_type: workType });
      log.warn('work order cut off by shutdown; the broker hands it out again when its claim goes stale');
      return;
    }
    const seconds = (Date.now() - claimedAt) / 1000;
    this.metrics.duration.observe({ work_type: workType, result: result.success ? 'success' : 'failure' }, seconds);
    if (result.success) this.metrics.succeeded.inc({ work_type: workType });
    else this.metrics.failed.inc({ work_type: workType, retryable: String(result.retryable) });
    if (result.success) log.info({ message: result.message, seconds }, 'work order succeeded');
    else log.warn({ message: result.message, retryable: result.retryable, seconds }, 'work order failed');
    if (!(await this.report(order.id, result, log))) this.metrics.abandoned.inc({ work_type: workType });
  }

  /** The completion body, or undefined when the order was cut off (no verdict). */
  private async outcome(order: WorkOrder, ctx: WorkOrderContext): Promise<CompleteWorkOrder | undefined> {
    const runner = RUNNERS[order.work_type];
    try {
      if (!runner) throw new WorkOrderError(`Unknown work type: ${order.work_type}`, false);
      const refusal = await this.deps.trust?.workOrderRefusal(order);
      if (refusal) throw new WorkOrderError(`refused: ${refusalMessage(refusal)}`, false);
      return { success: true, message: await runner(ctx, order) };
    } catch (err) {
      if (err instanceof WorkOrderAborted || ctx.signal.aborted) return undefined;
      return { success: false, message: truncate(errorMessage(err)), retryable: isTransient(err) };
    }
  }

  /** A result the broker does not take is left to the stale-claim release. */
  private report(orderId: string, result: CompleteWorkOrder, log: Logger): Promise<boolean> {
    return postResult(
      async () => log.debug({ answer: await this.api.complete(orderId, result) }, 'work order completed'),
      (err) =>
        log.error({ err: errorMessage(err) }, 'work order result not recorded; the broker hands it out again when its claim goes stale'),
    );
  }
}

/** Results stay readable and bounded in the log table. */
function truncate(text: string, max = 4000): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
