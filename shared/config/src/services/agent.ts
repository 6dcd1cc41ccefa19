import { z } from 'zod';
import { bool, int, log, port } from '../fields.ts';

/**
 * The in-cluster agent: Brokkr's BROKKR__AGENT__* names (so an operator can move over) plus ours
 * for resync, long-poll and failure backoff. Intervals are seconds unless the name says otherwise.
 */
export const agentConfigSchema = z.object({
  ...log,
  BROKKR__AGENT__BROKER_URL: z.string().url().default('http://localhost:3000'),
  BROKKR__AGENT__PAK: z.string().min(1, 'the agent PAK is required'),
  BROKKR__AGENT__AGENT_NAME: z.string().min(1).default('DEFAULT'),
  BROKKR__AGENT__CLUSTER_NAME: z.string().min(1).default('DEFAULT'),
  /** Heartbeat period, and the target-state poll period when the broker offers no long-poll. */
  BROKKR__AGENT__POLLING_INTERVAL: int(10, 1),
  /** Start-up wait for the broker's /readyz: this many attempts, one second apart. */
  BROKKR__AGENT__MAX_RETRIES: int(60, 1),
  BROKKR__AGENT__HEALTH_PORT: port(8080),
  BROKKR__AGENT__DEPLOYMENT_HEALTH_ENABLED: bool(true),
  /** Health is reported at least this often, and at once when a status changes. */
  BROKKR__AGENT__DEPLOYMENT_HEALTH_INTERVAL: int(60, 1),
  /** Pods are inspected this often to notice a change; 0 = POLLING_INTERVAL. */
  BROKKR__AGENT__DEPLOYMENT_HEALTH_CHECK_INTERVAL: int(0, 0),
  /** A running pod not Ready for longer than this counts as degraded (NotReady); within it, unknown. */
  BROKKR__AGENT__READINESS_GRACE_SECONDS: int(60, 0, 86_400),
  /** Set: namespaced objects go to (and are listed in) this namespace only. */
  BROKKR__AGENT__WATCH_NAMESPACE: z.string().min(1).optional(),
  /**
   * The namespace the agent runs in, where its PAK and token live: no stack may place anything
   * there. Unset: the in-cluster service account's namespace (the chart also sets it).
   */
  BROKKR__AGENT__NAMESPACE: z.string().min(1).optional(),
  /**
   * The Pod Security Standard (`pod-security.kubernetes.io/enforce`, `audit`, `warn`) of every
   * namespace a confined generator's stacks create or the agent creates for it: baseline keeps
   * tenant pods off the host (no hostPath, host network or privileged containers); privileged
   * leaves the labels to the manifest.
   */
  BROKKR__AGENT__TENANT_POD_SECURITY: z.enum(['privileged', 'baseline', 'restricted']).default('baseline'),
  /**
   * Signed intent (docs/signatures.md): a trust policy file (YAML or JSON; the chart mounts it from a
   * Secret in the agent's namespace). Set: the agent checks what the hub sends against it before any
   * apply, prune, deletion or work order. Unset: no checks, as Brokkr's agent.
   */
  BROKKR__AGENT__TRUST_POLICY_FILE: z.string().min(1).optional(),
  /** The ConfigMap in the agent's namespace where a trust-checking agent keeps the versions and metadata it took. */
  BROKKR__AGENT__TRUST_STATE_CONFIGMAP: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/)
    .default('brokkr-agent-trust-state'),
  /**
   * The brokkr-render binary an agent requiring signatures renders signed charts and overlays with
   * (docs/signatures.md, "Charts and overlays"; the agent's image holds it at /usr/local/bin/brokkr-render).
   * Unset: the one built from this checkout (development), found when a signed chart first comes.
   */
  BROKKR__AGENT__RENDERER_BINARY: z.string().min(1).optional(),
  /** A kubeconfig file; unset: in-cluster credentials, else the usual KUBECONFIG / ~/.kube/config. */
  BROKKR__AGENT__KUBECONFIG: z.string().min(1).optional(),
  /** Brokkr's name for the same setting (used when BROKKR__AGENT__KUBECONFIG is unset). */
  BROKKR__AGENT__KUBECONFIG_PATH: z.string().min(1).optional(),
  /** Drift correction: every stack is re-applied at least this often. */
  BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: int(300, 1),
  /**
   * While the agent channel (WebSocket) is up, the target state is fetched on its hints and at
   * least this often (±20 %) in case a hint was lost; the polling interval applies only without it.
   */
  BROKKR__AGENT__CHANNEL_RESYNC_SECONDS: int(300, 1, 86_400),
  /** How long the broker may hold a target-state request; 0 = plain polling. */
  BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: int(30, 0, 60),
  /** A failed stack is retried after base × 2^(failures-1) (with jitter), capped at the max. */
  BROKKR__AGENT__RETRY_BACKOFF_BASE_MS: int(2000, 10, 3_600_000),
  BROKKR__AGENT__RETRY_BACKOFF_MAX_SECONDS: int(300, 1, 86_400),
  /** Kubernetes requests in flight at once within one apply phase or listing. */
  BROKKR__AGENT__APPLY_CONCURRENCY: int(8, 1, 64),
  /** How long a pass waits for an applied CRD to become Established. */
  BROKKR__AGENT__CRD_ESTABLISHED_TIMEOUT_SECONDS: int(60, 1, 600),
  /**
   * In-stack waves (annotation brokkr.io/wave): how long one wave of a stack may take to become
   * healthy before the stack's apply fails naming it (later waves are not applied).
   */
  BROKKR__AGENT__WAVE_HEALTH_TIMEOUT_SECONDS: int(300, 1, 86_400),
  /** Agent-delivered webhooks are claimed this often (Brokkr's agent: 10 s, fixed); 0 = this agent delivers none. */
  BROKKR__AGENT__WEBHOOK_POLL_INTERVAL_SECONDS: int(10, 0, 3600),
  /** Work orders run at once by this agent (Brokkr's agent: one at a time); 0 = this agent claims none. */
  BROKKR__AGENT__WORK_ORDER_CONCURRENCY: int(2, 0, 16),
  /** The agent channel (WebSocket); unset: the broker URL with ws(s):// and /internal/ws/agent. */
  BROKKR__AGENT__WS_URL: z.string().url().optional(),
  /** true: never dial the agent channel; hints come from the long-poll, uplinks go over REST. */
  BROKKR__AGENT__WS_FORCE_REST: bool(false),
  /**
   * A stack's manifest may adopt a live object no stack manages (annotation brokkr.io/adopt-existing:
   * "true") where its generator's grant allows adoption too (off by default); false = such objects
   * are always refused, whatever the grants (docs/security.md, "Tenants confined in shared clusters").
   */
  BROKKR__AGENT__ADOPTION_ENABLED: bool(true),
  /**
   * Drift detection: the agent watches what it applied, checks it by a server-side dry run, reports
   * what changed behind its back and corrects it or only reports it, by each stack's drift policy;
   * the resync interval becomes the period of its full sweep. false = re-apply every stack each
   * resync interval without looking (the behaviour before drift detection).
   */
  BROKKR__AGENT__DRIFT_ENABLED: bool(true),
  /** A watched object is checked once it has been quiet this long after a change. */
  BROKKR__AGENT__DRIFT_DEBOUNCE_MS: int(1000, 0, 60_000),
  /** On-demand diagnostics (pod statuses, events, log tails); false = this agent claims none. */
  BROKKR__AGENT__DIAGNOSTICS_ENABLED: bool(true),
  /** Log tail per container: at most this many last lines (Brokkr: 100) … */
  BROKKR__AGENT__DIAGNOSTICS_LOG_TAIL_LINES: int(100, 1, 10_000),
  /** … and at most this many bytes (the newest are kept). */
  BROKKR__AGENT__DIAGNOSTICS_LOG_TAIL_BYTES: int(16_384, 256, 1_048_576),
  /** Kubernetes events per result, newest first (Brokkr: 50 per namespace). */
  BROKKR__AGENT__DIAGNOSTICS_MAX_EVENTS: int(100, 1, 1000),
});
export type AgentConfig = z.output<typeof agentConfigSchema>;
