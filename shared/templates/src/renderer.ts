import { FairQueue } from '@brokkr/render';
import type { Job, JobResult } from './jobs.ts';
import { RendererProcess } from './renderer-process.ts';
import type { Pending, TemplateRendererOptions } from './renderer-options.ts';

export type { TemplateRendererOptions } from './renderer-options.ts';

/** Runs template checks and renders in sandboxed processes, fairly between tenants. */
export interface TemplateRenderer {
  /** The result; rejects with TemplateRendererBusy when the tenant's share of the queue is full. */
  run(job: Job, tenant: string): Promise<JobResult>;
  close(): Promise<void>;
}

export class TemplateRendererBusy extends Error {
  override name = 'TemplateRendererBusy';
}

/**
 * A few renderer processes, each serving one tenant for its whole life: a process that has run
 * one tenant's template never runs another's, so even a hole in the engine could not reach into
 * another tenant's render. When every process is taken, the next free one is handed to the
 * tenant whose turn it is (FairQueue), replaced by a fresh process for that tenant.
 */
class RendererPool implements TemplateRenderer {
  private readonly processes = new Set<RendererProcess>();
  private readonly queue: FairQueue<Pending>;
  private closed = false;

  constructor(private readonly options: Required<TemplateRendererOptions>) {
    this.queue = new FairQueue(options.maxQueuedPerTenant, options.maxQueued);
  }

  run(job: Job, tenant: string): Promise<JobResult> {
    if (this.closed) return Promise.reject(new Error('the template renderer is closed'));
    return new Promise((resolve, reject) => {
      if (!this.queue.push(tenant, { job, resolve, reject }))
        return reject(new TemplateRendererBusy('too many templates waiting to render'));
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.drain()) pending.reject(new Error('the template renderer is closed'));
    await Promise.all([...this.processes].map((p) => p.stop('the template renderer is closed')));
  }

  /**
   * Hands free capacity to waiting tenants, the one with the fewest processes at work first: an
   * idle process of its own takes the job, else a new process starts for it — in a free slot, or
   * in the slot of another tenant's idle process. A tenant that keeps every process busy loses a
   * process to a waiting tenant as soon as one of its jobs ends.
   */
  private dispatch(): void {
    for (let tenant = this.nextTenant(); tenant !== undefined && !this.closed; tenant = this.nextTenant()) {
      const idle = this.all().find((p) => p.idle && p.tenant === tenant);
      if (idle) idle.start(this.queue.take(tenant)!);
      else if (!this.makeRoomFor(tenant)) return;
    }
  }

  /** The waiting tenant with the fewest processes at work (ties: its turn in the queue) that could use one more. */
  private nextTenant(): string | undefined {
    const atWork = (t: string) => this.all().filter((p) => p.tenant === t && !p.idle).length;
    const needsOne = (t: string) =>
      this.all().some((p) => p.idle && p.tenant === t) ||
      this.all().filter((p) => p.tenant === t && p.starting).length < this.queue.count(t);
    return this.queue.next(atWork, needsOne);
  }

  private makeRoomFor(tenant: string): boolean {
    if (this.processes.size >= this.options.processes) {
      const spare = this.all().find((p) => p.idle);
      if (!spare) return false;
      this.processes.delete(spare);
      void spare.stop();
    }
    this.processes.add(new RendererProcess(tenant, this.options, this.hooks()));
    return true;
  }

  private all(): RendererProcess[] {
    return [...this.processes];
  }

  private hooks() {
    return {
      onFree: () => this.dispatch(),
      onExit: (p: RendererProcess) => {
        this.processes.delete(p);
        this.dispatch();
      },
      onStartFailed: (p: RendererProcess, err: Error) => {
        // A process that cannot even start would be replaced for ever: fail what waits instead.
        for (const pending of this.queue.drain(p.tenant)) pending.reject(err);
      },
    };
  }
}

export function createTemplateRenderer(options: TemplateRendererOptions = {}): TemplateRenderer {
  return new RendererPool({
    processes: 2,
    maxQueuedPerTenant: 8,
    maxQueued: 32,
    deadlineMs: 5_000,
    memoryMb: 128,
    idleMs: 30_000,
    ...options,
  });
}
