import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects, LiveResource, ObjectMeta } from '../kube/objects.ts';
import { OBJECT_ID_ANNOTATION } from '../manifest/keys.ts';
import type { PodLike } from './classify.ts';

const MAX_HOPS = 4;

type Pod = PodLike & LiveResource;

/**
 * Pods → the deployment object they belong to: by the deployment-object label or annotation on
 * the pod itself (a bare Pod we applied carries it), else by walking the controller owner chain
 * (Pod → ReplicaSet → Deployment) up to an object stamped with it. Owner lookups are memoised for
 * one pass only: an owner's annotation changes when a new deployment object is applied.
 */
export class PodAttribution {
  private readonly memo = new Map<string, Promise<string | undefined>>();
  private readonly owners = new Map<string, Promise<ObjectMeta | undefined>>();

  constructor(
    private readonly objects: KubeObjects,
    private readonly discovery: Discovery,
  ) {}

  async podsByObject(tracked: Set<string>, namespace: string | undefined): Promise<Map<string, Pod[]>> {
    const pods = await this.pods(namespace);
    const byObject = new Map<string, Pod[]>([...tracked].map((id) => [id, []]));
    for (const pod of pods) {
      const id = await this.objectIdOf(pod.metadata, 0);
      if (id && tracked.has(id)) byObject.get(id)!.push(pod);
    }
    return byObject;
  }

  /**
   * Pods → the workload (Deployment, StatefulSet, DaemonSet, Job: by uid) whose controller chain
   * they descend from (Pod → ReplicaSet → Deployment): in-stack waves judge one workload at a time.
   */
  async podsByOwner(owners: Set<string>, namespace: string | undefined): Promise<Map<string, Pod[]>> {
    const pods = await this.pods(namespace);
    const byOwner = new Map<string, Pod[]>([...owners].map((uid) => [uid, []]));
    for (const pod of pods) {
      const uid = await this.ancestorIn(owners, pod.metadata, 0);
      if (uid) byOwner.get(uid)!.push(pod);
    }
    return byOwner;
  }

  private async pods(namespace: string | undefined): Promise<Pod[]> {
    const podType = await this.discovery.resolve('v1', 'Pod');
    if (!podType) throw new Error('the cluster serves no v1 Pods');
    return this.objects.list<Pod>(podType, namespace);
  }

  private async ancestorIn(owners: Set<string>, meta: ObjectMeta, hops: number): Promise<string | undefined> {
    const refs = meta.ownerReferences ?? [];
    const ref = refs.find((r) => r.controller) ?? refs[0];
    if (!ref || hops >= MAX_HOPS) return undefined;
    if (owners.has(ref.uid)) return ref.uid;
    let owner = this.owners.get(ref.uid);
    if (!owner) {
      owner = this.ownerMeta(ref, meta.namespace);
      this.owners.set(ref.uid, owner);
    }
    const found = await owner;
    return found ? this.ancestorIn(owners, found, hops + 1) : undefined;
  }

  private async ownerMeta(ref: { apiVersion: string; kind: string; name: string }, namespace: string | undefined) {
    const type = await this.discovery.resolve(ref.apiVersion, ref.kind);
    if (!type) return undefined;
    return this.objects.getMetadata(type, type.namespaced ? namespace : undefined, ref.name).catch(() => undefined);
  }

  private async objectIdOf(meta: ObjectMeta, hops: number): Promise<string | undefined> {
    const direct = meta.labels?.[OBJECT_ID_ANNOTATION] ?? meta.annotations?.[OBJECT_ID_ANNOTATION];
    if (direct) return direct;
    if (hops >= MAX_HOPS) return undefined;
    const refs = meta.ownerReferences ?? [];
    const ref = refs.find((r) => r.controller) ?? refs[0];
    if (!ref) return undefined;
    let pending = this.memo.get(ref.uid);
    if (!pending) {
      pending = this.ownerObjectId(ref, meta.namespace, hops + 1);
      this.memo.set(ref.uid, pending);
    }
    return pending;
  }

  private async ownerObjectId(ref: { apiVersion: string; kind: string; name: string }, namespace: string | undefined, hops: number) {
    const type = await this.discovery.resolve(ref.apiVersion, ref.kind);
    if (!type) return undefined;
    const owner = await this.objects.get(type, type.namespaced ? namespace : undefined, ref.name).catch(() => undefined);
    return owner ? this.objectIdOf(owner.metadata, hops) : undefined;
  }
}
