import type { DiagnosticPodStatus } from '@brokkr/contracts';

interface ContainerState {
  running?: { startedAt?: string };
  waiting?: { reason?: string; message?: string };
  terminated?: { reason?: string; message?: string; exitCode?: number };
}

/** The parts of a Pod that diagnostics read. */
export interface DiagnosedPod {
  metadata: { name: string; namespace?: string; uid: string; ownerReferences?: { uid: string }[] };
  spec?: { nodeName?: string; containers?: { name: string }[] };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: { name: string; ready?: boolean; restartCount?: number; state?: ContainerState }[];
  };
}

type Container = DiagnosticPodStatus['containers'][number];

/** Brokkr prints a running container's start with chrono's Display: `2025-01-15 10:00:00 UTC`. */
function startedAt(iso: string | undefined): string | null {
  return iso ? `Started at ${iso.replace('T', ' ').replace(/Z$/, ' UTC')}` : null;
}

function containerState(state: ContainerState | undefined): Pick<Container, 'state' | 'state_reason' | 'state_message'> {
  if (state?.running) return { state: 'Running', state_reason: null, state_message: startedAt(state.running.startedAt) };
  if (state?.waiting) return { state: 'Waiting', state_reason: state.waiting.reason ?? null, state_message: state.waiting.message ?? null };
  if (state?.terminated) {
    const { reason, message, exitCode } = state.terminated;
    return {
      state: 'Terminated',
      state_reason: reason ?? null,
      state_message: message ?? (exitCode === undefined ? null : `exit code ${exitCode}`),
    };
  }
  return { state: 'Unknown', state_reason: null, state_message: null };
}

/**
 * A pod in Brokkr's PodStatus shape: phase (`Unknown` without a status),
 * conditions, and per container readiness, restarts and state. Containers the kubelet has not
 * reported on yet (an unscheduled pod) are listed from the spec as `Unknown`, so a stuck pod still
 * names its containers.
 */
export function podStatusOf(pod: DiagnosedPod): DiagnosticPodStatus {
  const statuses = new Map((pod.status?.containerStatuses ?? []).map((c) => [c.name, c]));
  const names = [...(pod.spec?.containers ?? []).map((c) => c.name), ...statuses.keys()].filter((n, i, all) => all.indexOf(n) === i);
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? 'default',
    phase: pod.status?.phase ?? 'Unknown',
    conditions: (pod.status?.conditions ?? []).map((c) => ({
      condition_type: c.type,
      status: c.status,
      reason: c.reason ?? null,
      message: c.message ?? null,
    })),
    containers: names.map((name) => {
      const status = statuses.get(name);
      return { name, ready: status?.ready ?? false, restart_count: status?.restartCount ?? 0, ...containerState(status?.state) };
    }),
  };
}
