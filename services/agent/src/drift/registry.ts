import { createHash } from 'node:crypto';
import type { DriftField } from '@brokkr/contracts';
import type { ApiResource } from '../kube/discovery.ts';
import type { LiveResource } from '../kube/objects.ts';
import type { KubeObject } from '../manifest/parse.ts';
import { objectKey } from '../reconcile/inventory.ts';
import { comparable } from './compare.ts';
import type { ObjectRef } from './policy.ts';

/** One drift of one object, from the moment it is seen until it is gone: its id makes reports idempotent. */
export interface Episode {
  id: string;
  missing: boolean;
  fields: DriftField[];
}

/** An object the agent applied and follows: what it applied (stamped), and what it last found live. */
export interface TrackedObject {
  key: string;
  stackId: string;
  /** The deployment object it came from. */
  objectId: string;
  resource: ApiResource;
  manifest: KubeObject;
  ref: ObjectRef;
  /** Fingerprint of the live object when last checked (or applied): an event carrying the same is no news. */
  seen?: string;
  episode?: Episode;
}

/** What an applied object is, as the reconciler hands it over. */
export interface AppliedObject {
  key: string;
  resource: ApiResource;
  object: KubeObject;
  namespace: string | undefined;
  /** The live object the apply returned. */
  live?: LiveResource;
}

/** A digest of what says something about an object's content: status and the apiserver's bookkeeping left out. */
export function fingerprint(live: Record<string, unknown>): string {
  return createHash('sha1')
    .update(JSON.stringify(comparable(live)))
    .digest('base64url');
}

export const refOf = (resource: ApiResource, object: KubeObject, namespace: string | undefined): ObjectRef => ({
  group: resource.group,
  kind: resource.kind,
  namespace,
  name: object.metadata.name,
});

export const keyOfLive = (resource: ApiResource, live: LiveResource) => objectKey(resource, live.metadata.namespace, live.metadata.name);

/**
 * The objects the drift checks follow, by key: every object of every stack the reconciler applied
 * successfully, with the manifest it applied. A stack's set is replaced whole on each apply; an
 * object dropped from it (pruned, or its stack deleted) is no longer desired, and no longer drift.
 */
export class DriftRegistry {
  private readonly objects = new Map<string, TrackedObject>();
  private readonly stacks = new Map<string, Set<string>>();

  /** The stack's objects as just applied; returns the ones no longer desired (with their open episode, if any). */
  replaceStack(stackId: string, objectId: string, applied: readonly AppliedObject[]): TrackedObject[] {
    const previous = this.stacks.get(stackId) ?? new Set<string>();
    const keys = new Set<string>();
    for (const a of applied) {
      const before = this.objects.get(a.key);
      const tracked: TrackedObject = {
        key: a.key,
        stackId,
        objectId,
        resource: a.resource,
        manifest: a.object,
        ref: refOf(a.resource, a.object, a.namespace),
        // An object that was drifted is checked again whatever the apply returned.
        ...(a.live && !before?.episode ? { seen: fingerprint(a.live) } : {}),
        ...(before?.episode ? { episode: before.episode } : {}),
      };
      this.objects.set(a.key, tracked);
      keys.add(a.key);
    }
    this.stacks.set(stackId, keys);
    return [...previous].filter((k) => !keys.has(k)).flatMap((k) => this.drop(k));
  }

  /** Stops following the stack; returns its objects. */
  forgetStack(stackId: string): TrackedObject[] {
    const keys = this.stacks.get(stackId) ?? new Set<string>();
    this.stacks.delete(stackId);
    return [...keys].flatMap((k) => this.drop(k));
  }

  private drop(key: string): TrackedObject[] {
    const tracked = this.objects.get(key);
    this.objects.delete(key);
    return tracked ? [tracked] : [];
  }

  get(key: string): TrackedObject | undefined {
    return this.objects.get(key);
  }

  all(): TrackedObject[] {
    return [...this.objects.values()];
  }

  ofStack(stackId: string): TrackedObject[] {
    return [...(this.stacks.get(stackId) ?? [])].flatMap((k) => this.objects.get(k) ?? []);
  }

  stackIds(): string[] {
    return [...this.stacks.keys()];
  }

  get size(): number {
    return this.objects.size;
  }

  /** The resource types the followed objects are of (one watch each). */
  resources(): ApiResource[] {
    const byType = new Map<string, ApiResource>();
    for (const o of this.objects.values()) byType.set(resourceId(o.resource), o.resource);
    return [...byType.values()];
  }

  openEpisodes(): number {
    let open = 0;
    for (const o of this.objects.values()) if (o.episode) open++;
    return open;
  }
}

export const resourceId = (r: ApiResource) => `${r.group}/${r.version}/${r.plural}`;
