import type { DiagnosticEventInfo, SubmitDiagnosticResult } from '@brokkr/contracts';
import { PodAttribution } from '../health/attribute.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import { parseManifests, type KubeObject } from '../manifest/parse.ts';
import { errorMessage } from '../util/async.ts';
import type { DiagnosticsBrokerApi } from './broker-api.ts';
import { eventsAbout, objectKey, type EventSubjects, type KubeEvent } from './events.ts';
import { collectLogTails, type LogTailLimits } from './log-tails.ts';
import { podStatusOf, type DiagnosedPod } from './pod-status.ts';

export interface CollectorDeps {
  kube: KubeClient;
  objects: KubeObjects;
  discovery: Discovery;
  broker: DiagnosticsBrokerApi;
  /** Set: pods and events are read in this namespace only (the agent's RBAC may allow no more). */
  watchNamespace: string | undefined;
  logTails: LogTailLimits;
  maxEvents: number;
}

export interface Collected {
  body: SubmitDiagnosticResult;
  error: string | undefined;
}

/**
 * What one diagnostic request collects for its deployment object: the pods
 * attributed to the object (its id on the pod, or up the owner chain, as deployment health finds
 * them), their statuses, the Kubernetes events about those pods, their owners and the object's own
 * resources, and a bounded log tail per container. Any failure (Kubernetes unreachable, no RBAC)
 * becomes Brokkr's error result (`pod_statuses: "[]"`, `events: [{"error": …}]`) so the request is
 * answered, never left to expire.
 */
export class DiagnosticsCollector {
  constructor(private readonly deps: CollectorDeps) {}

  /** The result to post; `error` says the collection failed (the body then carries it, Brokkr's way). */
  async collect(deploymentObjectId: string): Promise<Collected> {
    try {
      return { body: await this.collectOrThrow(deploymentObjectId), error: undefined };
    } catch (err) {
      const error = errorMessage(err);
      const body = { pod_statuses: '[]', events: JSON.stringify([{ error }]), log_tails: null, collected_at: new Date().toISOString() };
      return { body, error };
    }
  }

  private async collectOrThrow(deploymentObjectId: string): Promise<SubmitDiagnosticResult> {
    const declared = await this.declaredObjects(deploymentObjectId);
    const attribution = new PodAttribution(this.deps.objects, this.deps.discovery);
    const byObject = await attribution.podsByObject(new Set([deploymentObjectId]), this.deps.watchNamespace);
    const pods = (byObject.get(deploymentObjectId) ?? []) as unknown as DiagnosedPod[];
    const events = await this.eventsFor(pods, declared);
    const tails = await collectLogTails(this.deps.kube, pods, this.deps.logTails);
    return {
      pod_statuses: JSON.stringify(pods.map(podStatusOf)),
      events: JSON.stringify(events),
      log_tails: JSON.stringify(tails),
      collected_at: new Date().toISOString(),
    };
  }

  /** The objects the deployment object declares; none when the broker will not show it to this agent. */
  private async declaredObjects(deploymentObjectId: string): Promise<KubeObject[]> {
    try {
      const yaml = await this.deps.broker.deploymentObjectYaml(deploymentObjectId);
      return yaml === undefined ? [] : parseManifests(yaml);
    } catch {
      // Unreadable (broker trouble, YAML we cannot parse): the pods and their owners still say a lot.
      return [];
    }
  }

  /** What the events must be about, and the namespaces to read them from. */
  private subjectsOf(pods: readonly DiagnosedPod[], declared: readonly KubeObject[]): { subjects: EventSubjects; namespaces: Set<string> } {
    const fallback = this.deps.watchNamespace ?? 'default';
    const subjects: EventSubjects = { uids: new Set(), objects: new Set() };
    const namespaces = new Set<string>();
    for (const pod of pods) {
      subjects.uids.add(pod.metadata.uid);
      for (const owner of pod.metadata.ownerReferences ?? []) subjects.uids.add(owner.uid);
      namespaces.add(pod.metadata.namespace ?? fallback);
    }
    for (const object of declared) {
      const { name, namespace } = object.metadata;
      // Without a namespace the object is cluster-scoped (its events have none) or went to the default one.
      subjects.objects.add(objectKey(object.kind, namespace ?? fallback, name));
      if (namespace === undefined) subjects.objects.add(objectKey(object.kind, undefined, name));
      namespaces.add(namespace ?? fallback);
    }
    return { subjects, namespaces };
  }

  private async eventsFor(pods: readonly DiagnosedPod[], declared: readonly KubeObject[]): Promise<DiagnosticEventInfo[]> {
    const { subjects, namespaces } = this.subjectsOf(pods, declared);
    if (namespaces.size === 0) return [];
    const eventType = await this.deps.discovery.resolve('v1', 'Event');
    if (!eventType) throw new Error('the cluster serves no v1 Events');
    const scoped = this.deps.watchNamespace ? [this.deps.watchNamespace] : [...namespaces];
    const all: KubeEvent[] = [];
    for (const namespace of scoped) all.push(...((await this.deps.objects.list(eventType, namespace)) as unknown as KubeEvent[]));
    return eventsAbout(all, subjects, this.deps.maxEvents);
  }
}
