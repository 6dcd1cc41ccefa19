/** What to render: a chart or overlay archive (.tgz) and how. */
export interface RenderJob {
  kind: 'helm' | 'kustomize';
  /** A gzip-compressed tar archive: a Helm chart (`<chart>/Chart.yaml`, as `helm package` makes it) or a directory tree. */
  archive: Buffer;
  /** kustomize: the overlay's directory inside the archive (default: its root). */
  path?: string;
  /** Helm: values over the chart's own. */
  values?: Record<string, unknown>;
  /** Helm: .Release.Name and .Release.Namespace. */
  release?: { name: string; namespace: string };
  /** Helm: .Capabilities as the target cluster's agent reports them; Helm's defaults without. */
  capabilities?: { kubeVersion: string; apiVersions: string[] };
}

export type RenderFailureReason = 'invalid' | 'limit' | 'unsupported' | 'timeout' | 'busy';

export type RenderResult = { ok: true; yaml: string } | { ok: false; error: string; reason: RenderFailureReason };

/** What one render may use. */
export interface RenderLimits {
  /** Wall clock from spawn to answer; the process is killed past it (reason `timeout`). */
  timeoutMs: number;
  /** CPU time (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Writable memory (RLIMIT_DATA); the renderer stops itself at half of it with reason `limit`. */
  memoryBytes: number;
  /** The rendered YAML. */
  outputBytes: number;
  /** The archive as sent (compressed). */
  archiveBytes: number;
  /** Entries in the archive. */
  files: number;
  /** One file of the archive, uncompressed. */
  fileBytes: number;
  /** All files of the archive, uncompressed. */
  totalBytes: number;
}

export const DEFAULT_LIMITS: RenderLimits = {
  timeoutMs: 10_000,
  cpuSeconds: 10,
  memoryBytes: 512 * 1024 * 1024,
  outputBytes: 8 * 1024 * 1024,
  archiveBytes: 10 * 1024 * 1024,
  files: 5_000,
  fileBytes: 5 * 1024 * 1024,
  totalBytes: 50 * 1024 * 1024,
};

/** How the renderer processes are walled in, found once by probing this machine. */
export interface Isolation {
  /** `namespace`: a new network namespace per process (no interface but a downed loopback); `none`: the host's network. */
  network: 'namespace' | 'user-namespace' | 'none';
  /** `nobody` when the hub runs as root, else the hub's own (unprivileged) user. */
  user: 'nobody' | 'own';
}

export interface Renderer {
  /** Renders one job of `tenant` in a process of its own; never rejects for what the job holds. */
  render(tenant: string, job: RenderJob): Promise<RenderResult>;
  /** `brokkr-render --version`: names the engines and the renderer's sources; cached renders are keyed by it. */
  readonly version: string;
  readonly isolation: Isolation;
  close(): Promise<void>;
}

export interface RendererOptions {
  /** The brokkr-render binary (locateRenderer() finds or builds it in development). */
  binary: string;
  limits?: Partial<RenderLimits>;
  /** Processes at work at once (default: the machine's cores). */
  concurrency?: number;
  /** Jobs one tenant may have waiting (default 8); one more is `busy`. */
  maxQueuedPerTenant?: number;
  /** Jobs waiting in all (default 64); one more is `busy`. */
  maxQueued?: number;
  /** Where the one line saying how the processes are isolated goes (default: stderr). */
  log?: (line: string) => void;
}
