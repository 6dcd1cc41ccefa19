import type { Job, JobResult } from './jobs.ts';

/** How the renderer's process pool is sized and bounded (renderer.ts, renderer-process.ts). */
export interface TemplateRendererOptions {
  /** Renderer processes at most (default 2). */
  processes?: number;
  /** Jobs one tenant may have waiting (default 8). */
  maxQueuedPerTenant?: number;
  /** Jobs waiting in all (default 32). */
  maxQueued?: number;
  /** Time one job may take; past it the process is killed and the job fails (default 5 s). */
  deadlineMs?: number;
  /** Heap of one process (default 128 MB); a template that needs more fails, the api does not. */
  memoryMb?: number;
  /** An idle process exits after this long (default 30 s). */
  idleMs?: number;
}

/** A job waiting for, or running in, a renderer process. */
export interface Pending {
  job: Job;
  resolve(result: JobResult): void;
  reject(err: Error): void;
}
