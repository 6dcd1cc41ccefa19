import { claimRenderJobs, type ClaimedRenderJob } from '@brokkr/render-jobs';
import { renderOne, type RenderOneDeps } from './render-one.ts';

export interface WorkerSettings {
  /** This process (renderers.id). */
  id: string;
  rendererVersion: string;
  /** Renders at work at once. */
  concurrency: number;
  leaseSeconds: number;
}

/**
 * Claims render jobs while it has free slots and renders each (render-one.ts). A wake-up (a NOTIFY,
 * the periodic tick, a finished render) claims as many jobs as slots are free, in one statement
 * fair between tenants; wake-ups while a claim runs are coalesced into one more claim after it.
 */
export class RenderWorker {
  private readonly atWork = new Map<string, Promise<void>>();
  private claiming: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: RenderOneDeps,
    private readonly settings: WorkerSettings,
  ) {}

  get inFlight(): number {
    return this.atWork.size;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claimFree().finally(() => {
      this.claiming = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /**
   * Claims nothing more and waits up to `graceMs` for the renders at work; resolves whether they all
   * finished (if not, the caller closes the renderer, which kills them, and releases their claims).
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopped = true;
    await this.claiming;
    let timer: NodeJS.Timeout | undefined;
    const finished = Promise.all(this.atWork.values()).then(() => true);
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
    const outcome = await Promise.race([finished, late]);
    clearTimeout(timer);
    return outcome;
  }

  /** Resolves when the renders at work have ended (after the renderer was closed under them). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.atWork.values());
  }

  private async claimFree(): Promise<void> {
    const free = this.settings.concurrency - this.atWork.size;
    if (free <= 0) return;
    try {
      const claimed = await claimRenderJobs(this.deps.db, {
        rendererVersion: this.settings.rendererVersion,
        renderer: this.settings.id,
        limit: free,
        leaseSeconds: this.settings.leaseSeconds,
      });
      for (const job of claimed) this.start(job);
      // Every free slot was filled: more may be waiting.
      if (claimed.length === free) this.again = true;
    } catch (err) {
      this.deps.logger.warn({ err }, 'claiming render jobs failed; trying again at the next wake-up');
    }
  }

  private start(job: ClaimedRenderJob): void {
    this.deps.metrics.inFlight.inc();
    const run = renderOne(this.deps, job)
      .catch((err: unknown) => {
        if (!this.stopped) this.deps.logger.warn({ err, job: job.id }, 'render job failed; its lease returns it to the queue');
      })
      .finally(() => {
        this.atWork.delete(job.id);
        this.deps.metrics.inFlight.dec();
        this.wake();
      });
    this.atWork.set(job.id, run);
  }
}
