/** The agent's building blocks, for its tests and benchmarks; the service itself is main.ts. */
export { loadSettings, settingsFrom, type AgentSettings } from './config.ts';
export { startAgent, type RunningAgent } from './runtime/agent.ts';
export { parseManifests, ManifestError, type KubeObject } from './manifest/parse.ts';
export { stamp } from './manifest/stamp.ts';
export * from './manifest/keys.ts';
export { summarizePods, type PodLike } from './health/classify.ts';
export { KubeClient } from './kube/client.ts';
export { KubeApiError, isRetryable } from './kube/errors.ts';
export { withRetries } from './kube/retry.ts';
export { Discovery } from './kube/discovery.ts';
export { KubeObjects } from './kube/objects.ts';
export { backoffDelay } from './util/async.ts';
