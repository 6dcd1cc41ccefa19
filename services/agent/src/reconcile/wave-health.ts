import { PodAttribution } from '../health/attribute.ts';
import { summarizePods, type PodLike } from '../health/classify.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects, LiveResource } from '../kube/objects.ts';
import { describe, type PlannedObject } from './plan.ts';

export interface WaveHealthContext {
  objects: KubeObjects;
  discovery: Discovery;
  /** How long a running pod may be not Ready before it counts as degraded (health/classify.ts). */
  readinessGraceMs: number;
}

/** healthy: the next wave may go; pending: not yet (`notReady` says what); failed: it will not get there by waiting. */
export interface WaveVerdict {
  status: 'healthy' | 'pending' | 'failed';
  notReady: string[];
}

export type ObjectVerdict = { status: WaveVerdict['status']; why?: string };

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
const isWorkload = (p: PlannedObject) => p.resource.group === 'apps' && WORKLOADS.has(p.object.kind);
const isJob = (p: PlannedObject) => p.resource.group === 'batch' && p.object.kind === 'Job';

export interface WorkloadState {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    updatedReplicas?: number;
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/** How many pods the workload wants (a DaemonSet: as many as its controller schedules). */
function desiredPods(kind: string, w: WorkloadState): number {
  if (kind === 'DaemonSet') return w.status?.desiredNumberScheduled ?? 1;
  return w.spec?.replicas ?? 1;
}

/** The controller has seen the applied spec and rolled every desired pod to it. */
function rolledOut(kind: string, w: WorkloadState, desired: number): boolean {
  if ((w.status?.observedGeneration ?? 0) < (w.metadata.generation ?? 0)) return false;
  const updated = kind === 'DaemonSet' ? w.status?.updatedNumberScheduled : w.status?.updatedReplicas;
  return (updated ?? 0) >= desired;
}

/** A workload by its pods (health/classify.ts, the judge of deployment health): a Pending pod is not healthy. */
export function workloadVerdict(kind: string, live: WorkloadState, pods: PodLike[], graceMs: number): ObjectVerdict {
  const desired = desiredPods(kind, live);
  if (desired === 0 && rolledOut(kind, live, 0)) return { status: 'healthy' };
  const { status, summary } = summarizePods(pods, { graceMs, now: Date.now() });
  const counts = `${summary.pods_ready}/${desired} pods ready`;
  if (status === 'degraded' || status === 'failing') {
    return { status: 'failed', why: `${status} (${summary.conditions.join(', ') || 'pods failed'}; ${counts})` };
  }
  const ready = status === 'healthy' && summary.pods_ready >= desired && rolledOut(kind, live, desired);
  return ready ? { status: 'healthy' } : { status: 'pending', why: counts };
}

export function jobVerdict(live: WorkloadState): ObjectVerdict {
  const conditions = live.status?.conditions ?? [];
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  if (holds('Complete')) return { status: 'healthy' };
  const failed = holds('Failed');
  if (failed) return { status: 'failed', why: `failed (${failed.reason ?? 'Failed'})` };
  return { status: 'pending', why: 'not complete' };
}

async function liveOf(ctx: WaveHealthContext, p: PlannedObject): Promise<LiveResource | undefined> {
  return ctx.objects.get(p.resource, p.namespace, p.object.metadata.name);
}

/**
 * Whether a wave's objects are healthy: Deployments, StatefulSets and DaemonSets once the
 * controller rolled the applied spec out and every desired pod is Ready; Jobs once complete;
 * anything else once applied. A degraded or failing pod, or a failed Job, fails the wave at once.
 */
export async function judgeWave(ctx: WaveHealthContext, planned: PlannedObject[]): Promise<WaveVerdict> {
  const workloads = planned.filter(isWorkload);
  const jobs = planned.filter(isJob);
  if (!workloads.length && !jobs.length) return { status: 'healthy', notReady: [] };
  const lives = await Promise.all([...workloads, ...jobs].map((p) => liveOf(ctx, p)));
  const verdicts: { p: PlannedObject; v: ObjectVerdict }[] = [];
  const pods = await podsOf(ctx, workloads, lives.slice(0, workloads.length));
  workloads.forEach((p, i) => {
    const live = lives[i] as (LiveResource & WorkloadState) | undefined;
    const v = live ? workloadVerdict(p.object.kind, live, pods.get(live.metadata.uid) ?? [], ctx.readinessGraceMs) : GONE;
    verdicts.push({ p, v });
  });
  jobs.forEach((p, i) => {
    const live = lives[workloads.length + i] as (LiveResource & WorkloadState) | undefined;
    verdicts.push({ p, v: live ? jobVerdict(live) : GONE });
  });
  return verdictOf(verdicts);
}

const GONE: ObjectVerdict = { status: 'pending', why: 'not found' };

function verdictOf(verdicts: { p: PlannedObject; v: ObjectVerdict }[]): WaveVerdict {
  const failed = verdicts.filter(({ v }) => v.status === 'failed');
  const pending = verdicts.filter(({ v }) => v.status === 'pending');
  const lines = (list: typeof verdicts) =>
    list.map(({ p, v }) => `${describe({ kind: p.object.kind, metadata: { ...p.object.metadata, namespace: p.namespace } })}: ${v.why}`);
  if (failed.length) return { status: 'failed', notReady: lines([...failed, ...pending]) };
  if (pending.length) return { status: 'pending', notReady: lines(pending) };
  return { status: 'healthy', notReady: [] };
}

/** The pods of each workload, by its uid, listed once per namespace the wave's workloads are in. */
async function podsOf(ctx: WaveHealthContext, workloads: PlannedObject[], lives: (LiveResource | undefined)[]) {
  const attribution = new PodAttribution(ctx.objects, ctx.discovery);
  const byOwner = new Map<string, PodLike[]>();
  const namespaces = new Set(workloads.map((p) => p.namespace));
  const uids = new Set(lives.flatMap((l) => (l ? [l.metadata.uid] : [])));
  for (const namespace of namespaces) {
    for (const [uid, pods] of await attribution.podsByOwner(uids, namespace)) byOwner.set(uid, [...(byOwner.get(uid) ?? []), ...pods]);
  }
  return byOwner;
}
