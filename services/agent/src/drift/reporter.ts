import type { DriftReport, DriftReportBatch } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { BrokerError } from '../broker/http.ts';
import type { AgentMetrics } from '../metrics.ts';
import { backoffDelay, sleep, Wakeup } from '../util/async.ts';

export interface DriftSink {
  /** POST /agents/{id}/drift; throws BrokerError. `closed`: episodes whose record the hub closed already. */
  reportDrift(agentId: string, batch: DriftReportBatch): Promise<{ closed?: string[] }>;
}

type Entry = { report: DriftReport } | { sweep: NonNullable<DriftReportBatch['sweep']> };

const BATCH_REPORTS = 200;
/** Well below the hub's 2 MiB body limit. */
const BATCH_CHARS = 1_000_000;
/** Reports of one pass go out together: the first waits this long for the others. */
const GATHER_MS = 200;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 60_000;
const QUEUE_MAX = 50_000;

/**
 * Sends what the drift checks found to the hub in batches, in the order it was found. A report
 * names its episode, so a batch that reached the hub but whose answer was lost can be sent again;
 * a later report of the same episode replaces one still waiting. A sweep marker goes in the batch
 * after every report queued before it. Against a hub without drift records (Brokkr's) nothing
 * is sent: detection and correction still run.
 */
export class DriftReporter {
  private queue: Entry[] = [];
  private failures = 0;
  private unsupported = false;
  private readonly wake = new Wakeup();

  constructor(private readonly deps: { sink: DriftSink; agentId: string; metrics: AgentMetrics; logger: Logger }) {}

  /** Told the episodes the hub closed already (an operator accepted their drift). */
  onClosed: (episodeIds: string[]) => void = () => undefined;

  report(report: DriftReport): void {
    if (this.unsupported) return;
    const waiting = this.queue.findIndex((e) => 'report' in e && e.report.id === report.id);
    if (waiting >= 0) this.queue.splice(waiting, 1);
    if (this.queue.length >= QUEUE_MAX) this.queue.shift();
    this.queue.push({ report });
    this.wake.notify();
  }

  sweep(stackIds: string[], startedAt: string): void {
    if (this.unsupported) return;
    this.queue.push({ sweep: { stack_ids: stackIds, started_at: startedAt } });
    this.wake.notify();
  }

  get pending(): number {
    return this.queue.length;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!this.queue.length) await this.wake.wait(60_000, signal);
      if (signal.aborted || !this.queue.length) continue;
      await sleep(GATHER_MS, signal);
      await this.flushOnce(signal);
    }
    await this.flushOnce().catch(() => undefined);
  }

  /** The next batch: reports up to the size bounds, closed by a sweep marker when one comes first. */
  private nextBatch(): { batch: DriftReportBatch; taken: number } {
    const reports: DriftReport[] = [];
    let chars = 0;
    let taken = 0;
    for (const entry of this.queue) {
      if ('sweep' in entry) return { batch: { reports, sweep: entry.sweep }, taken: taken + 1 };
      const size = JSON.stringify(entry.report).length;
      if (reports.length >= BATCH_REPORTS || (reports.length > 0 && chars + size > BATCH_CHARS)) break;
      reports.push(entry.report);
      chars += size;
      taken++;
    }
    return { batch: { reports }, taken };
  }

  private async flushOnce(signal?: AbortSignal): Promise<void> {
    while (this.queue.length && !this.unsupported) {
      const { batch, taken } = this.nextBatch();
      try {
        const answer = await this.deps.sink.reportDrift(this.deps.agentId, batch);
        this.deps.metrics.driftReports.inc({ status: 'sent' });
        if (answer.closed?.length) this.onClosed(answer.closed);
        this.failures = 0;
        this.queue.splice(0, taken);
      } catch (err) {
        if (!(await this.failed(err, taken, signal))) return;
      }
    }
  }

  /** True when the batch was dropped and the next may go; false to wait and retry. */
  private async failed(err: unknown, taken: number, signal?: AbortSignal): Promise<boolean> {
    if (err instanceof BrokerError && err.status === 404 && err.code !== 'agent_not_found') {
      this.unsupported = true;
      this.queue = [];
      this.deps.metrics.driftReports.inc({ status: 'unsupported' });
      this.deps.logger.info('the hub keeps no drift records: drift is detected and corrected here, not reported');
      return false;
    }
    if (err instanceof BrokerError && !err.transient) {
      // Refused (a stack no longer served, a report the hub will never take): sending it again cannot help.
      this.queue.splice(0, taken);
      this.deps.metrics.driftReports.inc({ status: 'refused' });
      this.deps.logger.warn({ err: err.message }, 'the hub refused a drift report batch; dropped');
      return true;
    }
    this.failures++;
    this.deps.metrics.driftReports.inc({ status: 'error' });
    const delay = backoffDelay(this.failures, RETRY_BASE_MS, RETRY_MAX_MS);
    this.deps.logger.debug({ err, retryInMs: delay }, 'drift report batch not sent; retrying');
    if (signal) await sleep(delay, signal);
    return false;
  }
}
