import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '@brokkr/render';
import { DEFAULT_YAML_LIMITS, describeLimit, type LimitExceeded, type YamlLimits } from './limits.ts';
import { quickVerdict, validateDeploymentYaml, type ValidateOptions, type YamlVerdict } from './validate.ts';
import type { WorkerJob, WorkerReply } from './worker.ts';

/** Validates deployment-object YAML: small content inline, the rest off the event loop. */
export interface YamlValidator {
  /**
   * The verdict; rejects with YamlValidatorBusy (the tenant's share of the queue, or the whole
   * queue, is full) or YamlValidatorClosed. `tenant` (auth/identity.ts tenantOf) is whose share the
   * validation takes while it waits for a worker.
   */
  validate(content: string, options: ValidateOptions, tenant?: string): Promise<YamlVerdict>;
  /** Stops the workers; queued and running validations are rejected. */
  close(): Promise<void>;
}

export interface YamlValidatorOptions {
  /** Worker threads, started on first use (default: cores − 1, between 1 and 4). */
  workers?: number;
  /** Validations waiting for a worker beyond which new ones are refused (default 64). */
  maxQueued?: number;
  /** Validations one tenant may have waiting (default 16, at most maxQueued). */
  maxQueuedPerTenant?: number;
  /** Time one validation may take on its worker, by content length; past it the worker is ended. */
  budgetMs?: (chars: number) => number;
  /** Heap of one worker; a validation that needs more is refused, the api is not affected. */
  memoryMb?: number;
  /**
   * Content up to this many characters is validated on the calling thread (default 2 KiB; 0
   * sends everything to the workers). The work is bounded and linear (limits.ts), so a small
   * document costs less to check than the round trip to a worker, and no worker (a V8 isolate of
   * its own, tens of MiB) is started for a fleet that only sends small objects.
   */
  inlineMaxChars?: number;
  /**
   * Larger content up to this many characters first goes through the fast path (fast-path.ts) on
   * the calling thread (default 128 KiB; 0 turns this off): plain block-style manifests are then
   * proved valid without a worker. The fast path reads ~100 MB/s, so declining content of this
   * size holds the event loop about a millisecond at most.
   */
  fastPathMaxChars?: number;
  limits?: YamlLimits;
}

export class YamlValidatorBusy extends Error {
  override name = 'YamlValidatorBusy';
}

export class YamlValidatorClosed extends Error {
  override name = 'YamlValidatorClosed';
}

/**
 * The work is linear (limits.ts), so the budget is only a backstop for whatever the limits miss;
 * it is generous enough that a legitimate body of the maximum size passes on a busy machine.
 */
/**
 * Small enough that the worst content of this size (4,096 unclosed `[`, which ends in a stack
 * overflow) holds the event loop ~10 ms at most on an idle core of this machine (~5× that with
 * load average 15); a typical manifest of this size takes well under a millisecond, less than
 * posting it to a worker and back. Measured figures: ADR 0012 (docs/adr).
 */
const DEFAULT_INLINE_MAX_CHARS = 2 * 1024;
const DEFAULT_FAST_PATH_MAX_CHARS = 128 * 1024;

const defaultBudgetMs = (chars: number) => 5_000 + (5_000 * chars) / (1024 * 1024);

// The worker runs the same kind of file as this module: .ts under tsx (tests), .js once built.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

interface Job {
  tenant: string;
  content: string;
  options: ValidateOptions;
  resolve(verdict: YamlVerdict): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  current?: { job: Job; timer: NodeJS.Timeout };
}

const refused = (exceeded: LimitExceeded): YamlVerdict => ({ ok: false, reason: describeLimit(exceeded), limit: exceeded });

/**
 * A small pool of worker threads, one validation per worker at a time. A worker that passes its
 * time budget or runs out of memory is ended (its validation is refused with that limit) and
 * replaced on the next validation; the api process itself is never blocked or at risk. Waiting
 * validations queue per tenant (FairQueue, as the template renderer's do): one tenant flooding
 * the pool with slow content fills only its own share, and a free worker goes to the waiting
 * tenant with the fewest validations at work.
 */
class WorkerPool implements YamlValidator {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: FairQueue<Job>;
  /** Validations at work per tenant. */
  private readonly running = new Map<string, number>();
  private closed = false;

  private readonly size: number;
  private readonly budgetMs: (chars: number) => number;
  private readonly memoryMb: number;
  private readonly limits: YamlLimits;
  private readonly inlineMaxChars: number;
  private readonly fastPathMaxChars: number;

  constructor(options: YamlValidatorOptions) {
    this.size = options.workers ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    const maxQueued = options.maxQueued ?? 64;
    this.queue = new FairQueue(Math.min(options.maxQueuedPerTenant ?? 16, maxQueued), maxQueued);
    this.budgetMs = options.budgetMs ?? defaultBudgetMs;
    this.memoryMb = options.memoryMb ?? 512;
    this.limits = options.limits ?? DEFAULT_YAML_LIMITS;
    this.inlineMaxChars = options.inlineMaxChars ?? DEFAULT_INLINE_MAX_CHARS;
    this.fastPathMaxChars = options.fastPathMaxChars ?? DEFAULT_FAST_PATH_MAX_CHARS;
  }

  validate(content: string, options: ValidateOptions, tenant = ''): Promise<YamlVerdict> {
    if (this.closed) return Promise.reject(new YamlValidatorClosed('the YAML validator is closed'));
    if (content.length <= this.inlineMaxChars) return Promise.resolve(validateDeploymentYaml(content, options, this.limits));
    // Declined content is read once more by the worker's validateDeploymentYaml: a small price
    // next to the parse that follows it there.
    const quick = content.length <= this.fastPathMaxChars ? quickVerdict(content, options, this.limits) : undefined;
    if (quick) return Promise.resolve(quick);
    return new Promise((resolve, reject) => {
      if (!this.queue.push(tenant, { tenant, content, options, resolve, reject }))
        return reject(new YamlValidatorBusy('too many YAML validations waiting'));
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new YamlValidatorClosed('the YAML validator is closed'));
    const slots = [...this.slots];
    for (const slot of slots) this.settle(slot, (job) => job.reject(new YamlValidatorClosed('the YAML validator is closed')));
    await Promise.all(slots.map((slot) => this.retire(slot)));
  }

  /** Hands free workers to waiting tenants, the one with the fewest validations at work first. */
  private dispatch(): void {
    for (let tenant = this.nextTenant(); tenant !== undefined; tenant = this.nextTenant()) {
      const slot = this.idle.pop() ?? this.spawn();
      if (!slot) return;
      this.start(slot, this.queue.take(tenant)!);
    }
  }

  private nextTenant(): string | undefined {
    return this.queue.next((tenant) => this.running.get(tenant) ?? 0);
  }

  private spawn(): Slot | undefined {
    if (this.closed || this.slots.size >= this.size) return undefined;
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: this.memoryMb } });
    // Idle workers must not keep the process alive; a request in flight does that.
    worker.unref();
    const slot: Slot = { worker };
    this.slots.add(slot);
    worker.on('message', (verdict: WorkerReply) => this.done(slot, (job) => job.resolve(verdict)));
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        this.settle(slot, (job) => job.resolve(refused({ limit: 'parser_memory_mb', value: this.memoryMb })));
      else this.settle(slot, (job) => job.reject(err));
      void this.retire(slot);
    });
    worker.on('exit', () => {
      this.settle(slot, (job) => job.reject(new Error('YAML worker exited unexpectedly')));
      void this.retire(slot);
    });
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    const budget = Math.round(this.budgetMs(job.content.length));
    const timer = setTimeout(() => {
      this.settle(slot, (running) => running.resolve(refused({ limit: 'parse_time_ms', value: budget })));
      void this.retire(slot);
    }, budget);
    slot.current = { job, timer };
    this.running.set(job.tenant, (this.running.get(job.tenant) ?? 0) + 1);
    const message: WorkerJob = { content: job.content, options: job.options, limits: this.limits };
    slot.worker.postMessage(message);
  }

  /** The slot's validation finished normally: answer it and give the slot the next one. */
  private done(slot: Slot, answer: (job: Job) => void): void {
    this.settle(slot, answer);
    if (!this.slots.has(slot)) return;
    this.idle.push(slot);
    this.dispatch();
  }

  /** Ends the slot's running validation (if any) with `answer`. */
  private settle(slot: Slot, answer: (job: Job) => void): void {
    const current = slot.current;
    if (!current) return;
    slot.current = undefined;
    clearTimeout(current.timer);
    const atWork = (this.running.get(current.job.tenant) ?? 1) - 1;
    if (atWork > 0) this.running.set(current.job.tenant, atWork);
    else this.running.delete(current.job.tenant);
    answer(current.job);
  }

  /** Takes the slot out of the pool and ends its thread; queued work goes to a new worker. */
  private async retire(slot: Slot): Promise<void> {
    if (!this.slots.delete(slot)) return;
    const index = this.idle.indexOf(slot);
    if (index >= 0) this.idle.splice(index, 1);
    this.dispatch();
    await slot.worker.terminate();
  }
}

export function createYamlValidator(options: YamlValidatorOptions = {}): YamlValidator {
  return new WorkerPool(options);
}
