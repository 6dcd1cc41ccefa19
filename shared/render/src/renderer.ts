import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { FairQueue } from './fair-queue.ts';
import { runJob } from './run-job.ts';
import { probeSandbox, type Sandbox } from './sandbox.ts';
import {
  DEFAULT_LIMITS,
  type Isolation,
  type RenderJob,
  type RenderLimits,
  type RenderResult,
  type Renderer,
  type RendererOptions,
} from './types.ts';

const exec = promisify(execFile);

interface Pending {
  job: RenderJob;
  resolve(result: RenderResult): void;
  reject(err: Error): void;
}

/**
 * Runs each job in a process of its own (a process never serves a second job, let alone a second
 * tenant), at most `concurrency` at once. Waiting jobs queue per tenant (FairQueue): a free slot
 * goes to the waiting tenant with the fewest renders at work, so one tenant's flood of slow charts
 * waits behind itself; past a tenant's share, or the whole queue's, a job is refused as `busy`.
 */
class SandboxedRenderer implements Renderer {
  private readonly queue: FairQueue<Pending>;
  private readonly atWork = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly stop = new AbortController();
  private working = 0;
  private closed = false;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly binary: string,
    readonly version: string,
    private readonly settings: { limits: RenderLimits; concurrency: number; maxQueuedPerTenant: number; maxQueued: number },
  ) {
    this.queue = new FairQueue(settings.maxQueuedPerTenant, settings.maxQueued);
  }

  get isolation(): Isolation {
    return this.sandbox.isolation;
  }

  render(tenant: string, job: RenderJob): Promise<RenderResult> {
    if (this.closed) return Promise.reject(new Error('the renderer is closed'));
    return new Promise((resolve, reject) => {
      if (!this.queue.push(tenant, { job, resolve, reject }))
        return resolve({ ok: false, reason: 'busy', error: 'too many renders waiting: try again later' });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.drain()) pending.reject(new Error('the renderer is closed'));
    // What is at work is killed: its callers get the same rejection.
    this.stop.abort();
    await Promise.all(this.running);
  }

  private dispatch(): void {
    while (!this.closed && this.working < this.settings.concurrency) {
      const tenant = this.queue.next((t) => this.atWork.get(t) ?? 0);
      if (tenant === undefined) return;
      this.start(tenant, this.queue.take(tenant)!);
    }
  }

  private start(tenant: string, pending: Pending): void {
    this.working++;
    this.atWork.set(tenant, (this.atWork.get(tenant) ?? 0) + 1);
    const launch = { sandbox: this.sandbox, binary: this.binary, limits: this.settings.limits, stop: this.stop.signal };
    const run = runJob(launch, pending.job)
      .then(pending.resolve, pending.reject)
      .finally(() => {
        this.running.delete(run);
        this.working--;
        const left = this.atWork.get(tenant)! - 1;
        if (left === 0) this.atWork.delete(tenant);
        else this.atWork.set(tenant, left);
        this.dispatch();
      });
    this.running.add(run);
  }
}

/**
 * A renderer over the brokkr-render binary: probes once how this machine lets it wall the
 * processes in (and logs it), asks the binary its version, then renders on demand.
 */
export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  const sandbox = await probeSandbox();
  const { stdout } = await exec(options.binary, ['--version'], { env: {}, timeout: 10_000 });
  const version = stdout.trim();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  log(describe(sandbox.isolation, version));
  return new SandboxedRenderer(sandbox, options.binary, version, {
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    concurrency: options.concurrency ?? Math.max(1, os.availableParallelism()),
    maxQueuedPerTenant: options.maxQueuedPerTenant ?? 8,
    maxQueued: options.maxQueued ?? 64,
  });
}

function describe(isolation: Isolation, version: string): string {
  const network = {
    namespace: 'each in a new network namespace (no network)',
    'user-namespace': 'each in a new user and network namespace (no network)',
    none: 'WITHOUT a network namespace: this process may not create one (run as root, grant CAP_SYS_ADMIN or allow user namespaces); the renderer refuses network access itself, but the kernel does not',
  }[isolation.network];
  const user = isolation.user === 'nobody' ? 'as nobody' : "as this process's user";
  return `${version}: chart renderer processes run ${user}, ${network}`;
}
