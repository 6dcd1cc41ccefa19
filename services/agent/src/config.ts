import { readFileSync } from 'node:fs';
import { agentConfigSchema, parseEnv, type AgentConfig } from '@brokkr/config';

/** The agent's settings in the units the code uses (milliseconds), derived once from the environment. */
export interface AgentSettings {
  brokerUrl: string;
  pak: string;
  agentName: string;
  clusterName: string;
  pollingIntervalMs: number;
  brokerReadyAttempts: number;
  healthPort: number;
  health: { enabled: boolean; reportIntervalMs: number; checkIntervalMs: number; readinessGraceMs: number };
  watchNamespace: string | undefined;
  kubeconfig: string | undefined;
  resyncIntervalMs: number;
  /** While the agent channel is up, the target state is fetched on hints and at least this often. */
  channelResyncMs: number;
  longPollWaitSeconds: number;
  backoff: { baseMs: number; maxMs: number };
  concurrency: number;
  crdEstablishedTimeoutMs: number;
  /** In-stack waves: how long one wave may take to become healthy. */
  waveHealthTimeoutMs: number;
  /** Whether a stack's manifest may adopt a live object no stack manages, where its grant allows it too (reconcile/ownership.ts). */
  adoptionEnabled: boolean;
  /** The agent's own namespace, which no stack may reach; undefined when it runs outside a cluster and none is set. */
  agentNamespace: string | undefined;
  /** The Pod Security Standard of the namespaces confined generators' stacks create. */
  tenantPodSecurity: AgentConfig['BROKKR__AGENT__TENANT_POD_SECURITY'];
  /** 0: agent-delivered webhooks are off. */
  webhookPollIntervalMs: number;
  /** Work orders run at once; 0: this agent claims none. */
  workOrderConcurrency: number;
  /** On-demand diagnostics: whether this agent claims requests, and the bounds of what it collects. */
  diagnostics: { enabled: boolean; logTailLines: number; logTailBytes: number; maxEvents: number };
  log: { level: AgentConfig['BROKKR__LOG__LEVEL']; format: AgentConfig['BROKKR__LOG__FORMAT'] };
  /** The agent channel: its URL (undefined: derived from brokerUrl) and whether it is turned off. */
  channel: { url: string | undefined; forceRest: boolean };
  /** Signed intent: the trust policy file (undefined: no checks) and the ConfigMap of what the agent took (src/trust/). */
  trust: { policyFile: string | undefined; stateConfigMap: string; rendererBinary: string | undefined };
  /** Drift detection (src/drift/): on, and how long a changed object must be quiet before it is checked. */
  drift: { enabled: boolean; debounceMs: number };
}

export function settingsFrom(config: AgentConfig): AgentSettings {
  const polling = config.BROKKR__AGENT__POLLING_INTERVAL * 1000;
  return {
    brokerUrl: config.BROKKR__AGENT__BROKER_URL.replace(/\/+$/, ''),
    pak: config.BROKKR__AGENT__PAK,
    agentName: config.BROKKR__AGENT__AGENT_NAME,
    clusterName: config.BROKKR__AGENT__CLUSTER_NAME,
    pollingIntervalMs: polling,
    brokerReadyAttempts: config.BROKKR__AGENT__MAX_RETRIES,
    healthPort: config.BROKKR__AGENT__HEALTH_PORT,
    health: {
      enabled: config.BROKKR__AGENT__DEPLOYMENT_HEALTH_ENABLED,
      reportIntervalMs: config.BROKKR__AGENT__DEPLOYMENT_HEALTH_INTERVAL * 1000,
      checkIntervalMs: (config.BROKKR__AGENT__DEPLOYMENT_HEALTH_CHECK_INTERVAL || config.BROKKR__AGENT__POLLING_INTERVAL) * 1000,
      readinessGraceMs: config.BROKKR__AGENT__READINESS_GRACE_SECONDS * 1000,
    },
    watchNamespace: config.BROKKR__AGENT__WATCH_NAMESPACE,
    kubeconfig: config.BROKKR__AGENT__KUBECONFIG ?? config.BROKKR__AGENT__KUBECONFIG_PATH,
    resyncIntervalMs: config.BROKKR__AGENT__RESYNC_INTERVAL_SECONDS * 1000,
    channelResyncMs: config.BROKKR__AGENT__CHANNEL_RESYNC_SECONDS * 1000,
    longPollWaitSeconds: config.BROKKR__AGENT__LONG_POLL_WAIT_SECONDS,
    backoff: { baseMs: config.BROKKR__AGENT__RETRY_BACKOFF_BASE_MS, maxMs: config.BROKKR__AGENT__RETRY_BACKOFF_MAX_SECONDS * 1000 },
    concurrency: config.BROKKR__AGENT__APPLY_CONCURRENCY,
    crdEstablishedTimeoutMs: config.BROKKR__AGENT__CRD_ESTABLISHED_TIMEOUT_SECONDS * 1000,
    waveHealthTimeoutMs: config.BROKKR__AGENT__WAVE_HEALTH_TIMEOUT_SECONDS * 1000,
    adoptionEnabled: config.BROKKR__AGENT__ADOPTION_ENABLED,
    agentNamespace: config.BROKKR__AGENT__NAMESPACE ?? inClusterNamespace(),
    tenantPodSecurity: config.BROKKR__AGENT__TENANT_POD_SECURITY,
    webhookPollIntervalMs: config.BROKKR__AGENT__WEBHOOK_POLL_INTERVAL_SECONDS * 1000,
    workOrderConcurrency: config.BROKKR__AGENT__WORK_ORDER_CONCURRENCY,
    diagnostics: {
      enabled: config.BROKKR__AGENT__DIAGNOSTICS_ENABLED,
      logTailLines: config.BROKKR__AGENT__DIAGNOSTICS_LOG_TAIL_LINES,
      logTailBytes: config.BROKKR__AGENT__DIAGNOSTICS_LOG_TAIL_BYTES,
      maxEvents: config.BROKKR__AGENT__DIAGNOSTICS_MAX_EVENTS,
    },
    log: { level: config.BROKKR__LOG__LEVEL, format: config.BROKKR__LOG__FORMAT },
    channel: { url: config.BROKKR__AGENT__WS_URL, forceRest: config.BROKKR__AGENT__WS_FORCE_REST },
    trust: {
      policyFile: config.BROKKR__AGENT__TRUST_POLICY_FILE,
      stateConfigMap: config.BROKKR__AGENT__TRUST_STATE_CONFIGMAP,
      rendererBinary: config.BROKKR__AGENT__RENDERER_BINARY,
    },
    drift: { enabled: config.BROKKR__AGENT__DRIFT_ENABLED, debounceMs: config.BROKKR__AGENT__DRIFT_DEBOUNCE_MS },
  };
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace of the pod the agent runs in, when it runs in one. */
function inClusterNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Throws ConfigError listing every bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): AgentSettings {
  return settingsFrom(parseEnv(agentConfigSchema, env));
}
