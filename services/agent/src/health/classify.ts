import type { HealthResource, HealthStatus, HealthSummary } from '../broker/types.ts';

interface ContainerState {
  running?: { startedAt?: string };
  waiting?: { reason?: string; message?: string };
  terminated?: { reason?: string; message?: string };
}

interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

/** The parts of a Pod that health reads. */
export interface PodLike {
  metadata: { name: string; namespace?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string | Date }[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

const DEGRADED_WAITING = new Set([
  'ImagePullBackOff',
  'ErrImagePull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'InvalidImageName',
  'RunContainerError',
  'ContainerCannotRun',
]);
const DEGRADED_TERMINATED = new Set(['OOMKilled', 'Error', 'ContainerCannotRun']);

/**
 * Worst wins. Brokkr lets the last pod examined decide (so a degraded container could overwrite
 * an earlier pod's `failing`); we rank instead: failing > degraded > unknown > healthy.
 */
const RANK: Record<HealthStatus, number> = { healthy: 0, unknown: 1, degraded: 2, failing: 3 };
const worse = (a: HealthStatus, b: HealthStatus): HealthStatus => (RANK[b] > RANK[a] ? b : a);

interface Verdict {
  status: HealthStatus;
  conditions: string[];
  resources: HealthResource[];
}

function waitingProblem(pod: PodLike, c: ContainerStatus, init: boolean): Verdict | undefined {
  const waiting = c.state?.waiting;
  if (!waiting?.reason || !DEGRADED_WAITING.has(waiting.reason)) return undefined;
  const resource: HealthResource = { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace ?? '', ready: false };
  if (waiting.message) resource.message = waiting.message;
  return { status: 'degraded', conditions: [init ? `InitContainer:${waiting.reason}` : waiting.reason], resources: [resource] };
}

/** Termination reasons that mark a container degraded (not checked for init containers, as in Brokkr). */
function terminationProblems(c: ContainerStatus): string[] {
  const found: string[] = [];
  const reason = c.state?.terminated?.reason;
  if (reason && DEGRADED_TERMINATED.has(reason)) found.push(reason);
  if (c.lastState?.terminated?.reason === 'OOMKilled') found.push('OOMKilled');
  return found;
}

function containerVerdict(pod: PodLike, c: ContainerStatus, init: boolean): Verdict {
  const waiting = waitingProblem(pod, c, init);
  const conditions = [...(waiting?.conditions ?? []), ...(init ? [] : terminationProblems(c))];
  return { status: conditions.length ? 'degraded' : 'healthy', conditions, resources: waiting?.resources ?? [] };
}

function podVerdict(pod: PodLike): Verdict {
  let status: HealthStatus = 'healthy';
  const conditions: string[] = [];
  const resources: HealthResource[] = [];
  const containers = [
    ...(pod.status?.initContainerStatuses ?? []).map((c) => containerVerdict(pod, c, true)),
    ...(pod.status?.containerStatuses ?? []).map((c) => containerVerdict(pod, c, false)),
  ];
  for (const v of containers) {
    status = worse(status, v.status);
    conditions.push(...v.conditions);
    resources.push(...v.resources);
  }
  if (pod.status?.phase === 'Failed') {
    status = 'failing';
    conditions.push('PodFailed');
  }
  if (pod.status?.phase === 'Unknown') status = worse(status, 'unknown');
  return { status, conditions, resources };
}

const isReady = (pod: PodLike) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** How long a pod may report Ready=False before it counts against its object (readiness grace). */
export interface ReadinessRule {
  graceMs: number;
  now: number;
}

/**
 * Readiness, which Brokkr does not look at: a pod not started yet (Pending) is `unknown`; a running
 * pod whose Ready condition has been False for longer than the grace is `degraded` (`NotReady`), one
 * inside the grace `unknown` (it may still pass its probe). A pod that has finished (Succeeded,
 * Failed) is judged by its phase alone.
 */
function readinessVerdict(pod: PodLike, rule: ReadinessRule): Verdict | undefined {
  // Not started yet: not a problem, and not healthy either — a stack waiting for this one to be
  // healthy (dependencies, rollout gates) must not be released by a pod that never ran.
  if (pod.status?.phase === 'Pending') return { status: 'unknown', conditions: [], resources: [] };
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'False' || pod.status?.phase !== 'Running') return undefined;
  const since = ready.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : Number.NEGATIVE_INFINITY;
  if (rule.now - since < rule.graceMs) return { status: 'unknown', conditions: [], resources: [] };
  const resource: HealthResource = { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace ?? '', ready: false };
  return { status: 'degraded', conditions: ['NotReady'], resources: [resource] };
}

/** The health of one deployment object from its pods; no pods → unknown. */
export function summarizePods(
  pods: PodLike[],
  rule: ReadinessRule = { graceMs: 60_000, now: Date.now() },
): { status: HealthStatus; summary: HealthSummary } {
  let status: HealthStatus = 'healthy';
  const conditions = new Set<string>();
  const resources: HealthResource[] = [];
  for (const pod of pods) {
    const own = podVerdict(pod);
    const readiness = own.status === 'healthy' ? readinessVerdict(pod, rule) : undefined;
    const v = readiness ?? own;
    status = worse(status, v.status);
    for (const c of v.conditions) conditions.add(c);
    resources.push(...v.resources);
  }
  if (pods.length === 0) status = 'unknown';
  return {
    status,
    summary: { pods_ready: pods.filter(isReady).length, pods_total: pods.length, conditions: [...conditions].sort(), resources },
  };
}
