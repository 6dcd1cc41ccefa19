import type { KubeClient } from './client.ts';
import { collectionPath, objectPath, type ApiResource } from './discovery.ts';
import { isNotFound } from './errors.ts';
import { FIELD_MANAGER } from '../manifest/keys.ts';

/** The metadata the agent reads back from the cluster. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  deletionTimestamp?: string;
  /** Who wrote which fields; an ownership refusal names these managers. */
  managedFields?: { manager?: string }[];
}

export interface LiveResource {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

interface ListPage<T> {
  items?: T[];
  metadata?: { continue?: string };
}

/** Only metadata travels: the inventory never needs specs, and a list of Secrets stays small. */
const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const OBJECT_METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const PAGE_SIZE = '500';

/** Object-level verbs over any resource type: server-side apply, get, delete, list. */
export class KubeObjects {
  constructor(private readonly kube: KubeClient) {}

  /**
   * Server-side apply (`application/apply-patch+yaml` with a JSON body, which YAML accepts), with
   * our field manager, force (we own what we apply) and strict field validation, so a typo'd field
   * fails the dry run instead of being dropped silently.
   */
  apply(resource: ApiResource, object: { metadata: { name: string; namespace?: string } }, dryRun = false): Promise<LiveResource> {
    return this.kube.request<LiveResource>('PATCH', objectPath(resource, object.metadata.namespace, object.metadata.name), {
      query: { fieldManager: FIELD_MANAGER, force: 'true', fieldValidation: 'Strict', ...(dryRun ? { dryRun: 'All' } : {}) },
      body: object,
      contentType: 'application/apply-patch+yaml',
    });
  }

  /**
   * A JSON merge patch (RFC 7386) under our field manager: `null` removes a key. For the few edits
   * that must not go through apply, which would also drop every field our last apply set.
   */
  mergePatch(resource: ApiResource, namespace: string | undefined, name: string, patch: unknown): Promise<LiveResource> {
    return this.kube.request<LiveResource>('PATCH', objectPath(resource, namespace, name), {
      query: { fieldManager: FIELD_MANAGER },
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /** A plain create (POST), for objects that must be new each time (a Shipwright BuildRun). */
  create(resource: ApiResource, namespace: string | undefined, object: unknown): Promise<LiveResource> {
    return this.kube.request<LiveResource>('POST', collectionPath(resource, namespace), {
      query: { fieldManager: FIELD_MANAGER },
      body: object,
    });
  }

  /** The object, or undefined when it does not exist. */
  async get(resource: ApiResource, namespace: string | undefined, name: string): Promise<LiveResource | undefined> {
    try {
      return await this.kube.request<LiveResource>('GET', objectPath(resource, namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The object's metadata only (a Secret's data never travels), or undefined when it does not exist. */
  async getMetadata(resource: ApiResource, namespace: string | undefined, name: string): Promise<ObjectMeta | undefined> {
    try {
      const res = await this.kube.request<{ metadata: ObjectMeta }>('GET', objectPath(resource, namespace, name), {
        accept: OBJECT_METADATA_ONLY,
      });
      return res.metadata;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Background propagation: dependents (ReplicaSets, Pods) go with their owner. False when already gone. */
  async delete(resource: ApiResource, namespace: string | undefined, name: string): Promise<boolean> {
    try {
      await this.kube.request('DELETE', objectPath(resource, namespace, name), { query: { propagationPolicy: 'Background' } });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Every object of a type matching the label selector (all namespaces unless one is given), paged. */
  async listMetadata(resource: ApiResource, labelSelector: string, namespace?: string): Promise<ObjectMeta[]> {
    const items: ObjectMeta[] = [];
    let cont: string | undefined;
    do {
      const page: ListPage<{ metadata: ObjectMeta }> = await this.kube.request('GET', collectionPath(resource, namespace), {
        query: { labelSelector, limit: PAGE_SIZE, continue: cont },
        accept: METADATA_ONLY,
      });
      for (const item of page.items ?? []) items.push(item.metadata);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return items;
  }

  /** Full objects (pods for health), paged. */
  async list<T extends LiveResource>(resource: ApiResource, namespace?: string, labelSelector?: string): Promise<T[]> {
    const items: T[] = [];
    let cont: string | undefined;
    do {
      const page: ListPage<T> = await this.kube.request('GET', collectionPath(resource, namespace), {
        query: { labelSelector, limit: PAGE_SIZE, continue: cont },
      });
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return items;
  }
}
