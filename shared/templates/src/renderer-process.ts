import type { ChildProcess } from 'node:child_process';
import type { Job, JobFailureCode, JobResult } from './jobs.ts';
import type { Pending, TemplateRendererOptions } from './renderer-options.ts';
import { spawnSandboxed } from './sandbox.ts';

// The process runs the same kind of file as this module: .ts under tsx (tests), .js once built.
const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './render-process.ts' : './render-process.js', import.meta.url);

export interface ProcessHooks {
  /** The process finished starting or a job: it can take the next one. */
  onFree(): void;
  onExit(process: RendererProcess): void;
  /** It ended before it was ready: what waits for it would wait for ever. */
  onStartFailed(process: RendererProcess, err: Error): void;
}

const failed = (message: string): JobResult => ({ ok: false, code: 'template_render_failed', message });

const FAILURE_CODES = new Set<JobFailureCode>([
  'invalid_template_syntax',
  'invalid_parameters_schema',
  'invalid_parameters',
  'template_render_failed',
]);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** A reply is what the sandboxed process says it is only if it has that shape: it ran client text. */
function asJobResult(message: unknown): JobResult {
  const m = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
  if (m.ok === true && (m.output === undefined || typeof m.output === 'string')) return { ok: true, output: m.output };
  const shaped =
    m.ok === false &&
    FAILURE_CODES.has(m.code as JobFailureCode) &&
    typeof m.message === 'string' &&
    (m.validationErrors === undefined || isStringList(m.validationErrors));
  if (!shaped) return failed('Template rendering failed: the renderer sent an unreadable reply');
  return {
    ok: false,
    code: m.code as JobFailureCode,
    message: m.message as string,
    validationErrors: m.validationErrors as string[] | undefined,
  };
}

/**
 * One sandboxed renderer process (sandbox.ts) serving one tenant: started on demand, one job at
 * a time, killed when a job passes its deadline, when it has been idle for a while, or when its
 * slot goes to another tenant. A job it was running when it died fails; the api does not.
 */
export class RendererProcess {
  private readonly child: ChildProcess;
  private ready = false;
  private exited = false;
  private current?: { pending: Pending; timer: NodeJS.Timeout };
  private idleTimer?: NodeJS.Timeout;
  private stderrTail = '';
  /** Killed or being killed: it takes no more jobs, even before its exit event arrives. */
  private dying = false;
  private readonly exit: Promise<void>;

  constructor(
    readonly tenant: string,
    private readonly options: Required<TemplateRendererOptions>,
    private readonly hooks: ProcessHooks,
  ) {
    this.child = spawnSandboxed(ENTRY, options.memoryMb);
    this.child.unref();
    this.child.channel?.unref();
    this.child.stderr?.on('data', (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2_000)));
    this.child.on('message', (message) => this.received(message));
    this.exit = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => resolve(this.ended(code, signal)));
      // A process that could not be spawned at all has no exit event.
      this.child.on('error', (err) => resolve(this.child.pid === undefined ? this.ended(null, null, err.message) : undefined));
    });
  }

  get idle(): boolean {
    return this.ready && !this.current && !this.dying;
  }

  get starting(): boolean {
    return !this.ready && !this.dying;
  }

  start(pending: Pending): void {
    clearTimeout(this.idleTimer);
    const timer = setTimeout(() => {
      this.kill();
      this.settle(failed(`Template rendering failed: it took longer than ${this.options.deadlineMs} ms`));
    }, this.options.deadlineMs);
    this.current = { pending, timer };
    this.child.send(pending.job satisfies Job);
  }

  async stop(reason?: string): Promise<void> {
    if (reason && this.current) {
      const { pending, timer } = this.current;
      this.current = undefined;
      clearTimeout(timer);
      pending.reject(new Error(reason));
    }
    this.kill();
    await this.exit;
  }

  private kill(): void {
    this.dying = true;
    this.child.kill('SIGKILL');
  }

  private received(message: unknown): void {
    if (!this.ready) {
      this.ready = true;
      this.armIdleTimer();
      return this.hooks.onFree();
    }
    if (!this.current) return;
    this.settle(asJobResult(message));
    this.armIdleTimer();
    this.hooks.onFree();
  }

  private settle(result: JobResult): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    clearTimeout(current.timer);
    current.pending.resolve(result);
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.kill(), this.options.idleMs);
    this.idleTimer.unref();
  }

  private ended(code: number | null, signal: NodeJS.Signals | null, spawnError?: string): void {
    if (this.exited) return;
    this.exited = true;
    const killed = this.dying;
    this.dying = true;
    clearTimeout(this.idleTimer);
    const outOfMemory = /heap limit|out of memory/i.test(this.stderrTail);
    this.settle(
      failed(
        outOfMemory
          ? `Template rendering failed: it needed more than ${this.options.memoryMb} MB`
          : `Template rendering failed: the renderer process ended (${signal ?? `exit code ${code}`})`,
      ),
    );
    if (!this.ready && !killed && !outOfMemory) {
      const why = spawnError ?? (this.stderrTail.trim() || String(signal ?? code));
      this.hooks.onStartFailed(this, new Error(`the template renderer process could not start: ${why}`));
    }
    this.hooks.onExit(this);
  }
}
