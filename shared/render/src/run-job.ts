import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Sandbox } from './sandbox.ts';
import type { RenderFailureReason, RenderJob, RenderLimits, RenderResult } from './types.ts';

const REASONS = new Set<RenderFailureReason>(['invalid', 'limit', 'unsupported']);

const failed = (reason: RenderFailureReason, error: string): RenderResult => ({ ok: false, reason, error });

/** The job as brokkr-render reads it from stdin (tools/renderer/job.go). */
function wireJob(job: RenderJob, limits: RenderLimits): string {
  return JSON.stringify({
    kind: job.kind,
    archive: job.archive.toString('base64'),
    path: job.path,
    values: job.values,
    release: job.release,
    capabilities: job.capabilities,
    limits: {
      outputBytes: limits.outputBytes,
      archiveBytes: limits.archiveBytes,
      files: limits.files,
      fileBytes: limits.fileBytes,
      totalBytes: limits.totalBytes,
      // Half the memory cap: the renderer answers "limit" itself well before the kernel refuses it memory.
      heapBytes: Math.floor(limits.memoryBytes / 2),
    },
  });
}

/** A reply is what the process says it is only if it has that shape: it read a tenant's archive. */
function asResult(stdout: string): RenderResult {
  let reply: unknown;
  try {
    reply = JSON.parse(stdout);
  } catch {
    return failed('invalid', 'the renderer sent an unreadable reply');
  }
  const r = (typeof reply === 'object' && reply !== null ? reply : {}) as Record<string, unknown>;
  if (r.ok === true && typeof r.yaml === 'string') return { ok: true, yaml: r.yaml };
  // An empty render: the result omits the empty string.
  if (r.ok === true && r.yaml === undefined) return { ok: true, yaml: '' };
  if (r.ok === false && typeof r.error === 'string' && REASONS.has(r.reason as RenderFailureReason))
    return failed(r.reason as RenderFailureReason, r.error);
  return failed('invalid', 'the renderer sent an unreadable reply');
}

/** Why a process that gave no answer ended: every such end is a limit of the sandbox or a crash on the tenant's input. */
function withoutAnswer(code: number | null, signal: NodeJS.Signals | null, stderr: string): RenderResult {
  if (signal === 'SIGKILL' || signal === 'SIGXCPU')
    return failed('limit', 'the render was stopped: it used more CPU time or memory than its limits');
  const fatal = (/fatal error: [^\n]*/.exec(stderr)?.[0] ?? stderr.trim().split('\n')[0] ?? '').slice(0, 300);
  if (/out of memory|cannot allocate|failed to reserve/.test(stderr))
    return failed('limit', `the render used more memory than its limit (${fatal})`);
  return failed('limit', `the renderer stopped without answering (${signal ?? `exit code ${code}`}${fatal ? `: ${fatal}` : ''})`);
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  overflow: boolean;
  stopped: boolean;
}

/** How a job's process is started: the binary, the sandbox around it, its limits; `stop` kills it (the renderer is closing). */
export interface Launch {
  sandbox: Sandbox;
  binary: string;
  limits: RenderLimits;
  stop?: AbortSignal;
}

/** The reply is JSON: escaping can make it up to six times the YAML it carries. */
const replyCap = (limits: RenderLimits) => limits.outputBytes * 6 + 1024 * 1024;

/**
 * Runs one brokkr-render process for one job, in an empty temporary working directory with an
 * empty environment, walled in by the sandbox's command line; kills its whole process group at the
 * deadline or when it writes more than its reply may hold.
 */
async function spawnOnce(launch: Launch, input: string): Promise<Outcome> {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'brokkr-render-'));
  try {
    const { file, args } = launch.sandbox.command(launch.binary, launch.limits);
    const child = spawn(file, args, { cwd, env: {}, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    return await collect(child, input, launch);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

function collect(child: ReturnType<typeof spawn>, input: string, { limits, stop }: Launch): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    const outcome = { timedOut: false, overflow: false, stopped: false };
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => ((outcome.timedOut = true), killGroup()), limits.timeoutMs);
    const onStop = () => ((outcome.stopped = true), killGroup());
    // Closed while the process was being started: the event has passed.
    if (stop?.aborted) onStop();
    else stop?.addEventListener('abort', onStop);
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > replyCap(limits)) return ((outcome.overflow = true), killGroup());
      out.push(chunk);
    });
    // The head: Go writes why it died (`fatal error: out of memory`) before the goroutines' stacks.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4_000) stderr += chunk.toString();
    });
    // The process may die before it read everything (a limit): that is its exit's story, not an error here.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input);
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      resolve({ code, signal, stdout: Buffer.concat(out).toString(), stderr, ...outcome });
    };
    // Not started at all (no such binary): the hub's fault, not the job's.
    child.on('error', (err) => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      reject(new Error(`the renderer could not be started: ${err.message}`));
    });
    child.on('close', done);
  });
}

/**
 * Renders one job in a fresh sandboxed process. Whatever the job holds, the answer is a result;
 * it rejects only when the renderer cannot be started at all (the binary or a sandbox tool is
 * missing: exit 126/127 from the exec chain) or is closed meanwhile.
 */
export async function runJob(launch: Launch, job: RenderJob): Promise<RenderResult> {
  const { limits } = launch;
  if (job.archive.length > limits.archiveBytes)
    return failed('limit', `the archive is ${job.archive.length} bytes, more than the limit of ${limits.archiveBytes}`);
  const o = await spawnOnce(launch, wireJob(job, limits));
  if (o.stopped) throw new Error('the renderer is closed');
  if (o.code === 126 || o.code === 127) throw new Error(`the renderer could not be started: ${o.stderr.trim().split('\n')[0]}`);
  if (o.timedOut) return failed('timeout', `the render took longer than ${limits.timeoutMs} ms`);
  if (o.overflow) return failed('limit', `the rendered output is larger than ${limits.outputBytes} bytes`);
  if (o.code === 0 && o.stdout.length > 0) return asResult(o.stdout);
  return withoutAnswer(o.code, o.signal, o.stderr);
}
