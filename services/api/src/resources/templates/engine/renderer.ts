import { Worker } from 'node:worker_threads';
import type { Job, JobResult } from './jobs.ts';

/** Runs template checks and renders off the event loop, each with a deadline and a heap cap. */
export interface TemplateRenderer {
  /** The result; rejects with TemplateRendererBusy when too many jobs are waiting. */
  run(job: Job): Promise<JobResult>;
  close(): Promise<void>;
}

export interface TemplateRendererOptions {
  /** Worker threads, started on first use (default 2). */
  workers?: number;
  /** Jobs waiting for a worker beyond which new ones are refused (default 32). */
  maxQueued?: number;
  /** Time one job may take; past it the worker is ended and the job fails (default 5 s). */
  deadlineMs?: number;
  /** Heap of one worker (default 128 MB); a template that needs more fails, the api does not. */
  memoryMb?: number;
}

export class TemplateRendererBusy extends Error {
  override name = 'TemplateRendererBusy';
}

// The worker runs the same kind of file as this module: .ts under tsx (tests), .js once built.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

interface Pending {
  job: Job;
  resolve(result: JobResult): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** The thread has loaded the engine (its first message); jobs wait for it. */
  ready: boolean;
  current?: { pending: Pending; timer: NodeJS.Timeout };
}

const failed = (message: string): JobResult => ({ ok: false, code: 'template_render_failed', message });

/**
 * A small pool of worker threads. A job that passes its deadline or runs out of heap ends its
 * worker (a runaway template is stopped, not waited for) and fails with `template_render_failed`;
 * the next job gets a fresh worker.
 */
class RendererPool implements TemplateRenderer {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;
  private starting = 0;

  constructor(private readonly options: Required<TemplateRendererOptions>) {}

  run(job: Job): Promise<JobResult> {
    if (this.closed) return Promise.reject(new Error('the template renderer is closed'));
    if (this.queue.length >= this.options.maxQueued)
      return Promise.reject(new TemplateRendererBusy('too many templates waiting to render'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the template renderer is closed'));
    const slots = [...this.slots];
    for (const slot of slots) this.settle(slot, (p) => p.reject(new Error('the template renderer is closed')));
    await Promise.all(slots.map((slot) => this.retire(slot)));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.idle.pop();
      if (!slot) {
        // A new thread takes the next job once it is ready (its start-up is not the job's time).
        if (this.starting === 0) this.spawn();
        return;
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot | undefined {
    if (this.closed || this.slots.size >= this.options.workers) return undefined;
    // env: {} — the thread sees no environment variables (no credentials within reach of a template).
    const worker = new Worker(WORKER_URL, { env: {}, resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb } });
    worker.unref();
    const slot: Slot = { worker, ready: false };
    this.slots.add(slot);
    this.starting++;
    worker.on('message', (message: JobResult | { ready: true }) => {
      if ('ready' in message) this.becameReady(slot);
      else this.done(slot, message);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const message =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `Template rendering failed: it needed more than ${this.options.memoryMb} MB`
          : `Template rendering failed: ${err.message}`;
      this.settle(slot, (p) => p.resolve(failed(message)));
      // A thread that cannot even start would be replaced for ever: fail what waits instead.
      if (!slot.ready) for (const pending of this.queue.splice(0)) pending.reject(err);
      void this.retire(slot);
    });
    worker.on('exit', () => {
      this.settle(slot, (p) => p.reject(new Error('template worker exited unexpectedly')));
      void this.retire(slot);
    });
    return slot;
  }

  private becameReady(slot: Slot): void {
    slot.ready = true;
    this.starting--;
    this.idle.push(slot);
    this.dispatch();
  }

  private start(slot: Slot, pending: Pending): void {
    const timer = setTimeout(() => {
      this.settle(slot, (p) => p.resolve(failed(`Template rendering failed: it took longer than ${this.options.deadlineMs} ms`)));
      void this.retire(slot);
    }, this.options.deadlineMs);
    slot.current = { pending, timer };
    slot.worker.postMessage(pending.job);
  }

  private done(slot: Slot, result: JobResult): void {
    this.settle(slot, (p) => p.resolve(result));
    if (!this.slots.has(slot)) return;
    this.idle.push(slot);
    this.dispatch();
  }

  private settle(slot: Slot, answer: (pending: Pending) => void): void {
    const current = slot.current;
    if (!current) return;
    slot.current = undefined;
    clearTimeout(current.timer);
    answer(current.pending);
  }

  private async retire(slot: Slot): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (!slot.ready) this.starting--;
    const index = this.idle.indexOf(slot);
    if (index >= 0) this.idle.splice(index, 1);
    this.dispatch();
    await slot.worker.terminate();
  }
}

export function createTemplateRenderer(options: TemplateRendererOptions = {}): TemplateRenderer {
  return new RendererPool({ workers: 2, maxQueued: 32, deadlineMs: 5_000, memoryMb: 128, ...options });
}
