import { mapLimit } from '../util/async.ts';
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';

/** One resource type of one group-version, as discovery describes it. */
export interface ApiResource {
  group: string;
  version: string;
  /** `v1` or `<group>/<version>`, as in an object's apiVersion. */
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs: string[];
}

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

interface GroupVersionEntry {
  at: number;
  /** null: the group-version is not served (yet). */
  resources: ApiResource[] | null;
}

export interface Listable {
  resources: ApiResource[];
  /** Group-versions whose discovery failed: the listing built from these resources is partial. */
  failures: string[];
}

const TTL_MS = 5 * 60_000;
/** A miss re-fetches a group-version at most this often, so a typo'd kind cannot hammer the apiserver. */
const MISS_REFRESH_MS = 1000;

export function collectionPath(r: ApiResource, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}` : `${base}/${r.plural}`;
}

export function objectPath(r: ApiResource, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * Kind → resource resolution and the list of every listable type, cached; a miss re-reads the
 * group-version once, so a CRD applied earlier in the same pass resolves.
 */
export class Discovery {
  private readonly groupVersions = new Map<string, GroupVersionEntry>();
  private preferred: { at: number; groupVersions: string[] } | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly concurrency = 8,
  ) {}

  async resolve(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    const cached = await this.groupVersion(apiVersion, false);
    const hit = cached?.find((r) => r.kind === kind);
    if (hit) return hit;
    return (await this.groupVersion(apiVersion, true))?.find((r) => r.kind === kind);
  }

  /** Forget everything (after CRDs change), so the next lookups and listings see new types. */
  invalidate(): void {
    this.groupVersions.clear();
    this.preferred = undefined;
  }

  /** Every resource type of every group's preferred version that can be listed and deleted. */
  async listable(): Promise<Listable> {
    const groupVersions = await this.preferredGroupVersions();
    const failures: string[] = [];
    const results = await mapLimit(groupVersions, this.concurrency, (gv) => this.groupVersion(gv, false));
    const resources: ApiResource[] = [];
    results.forEach((result, i) => {
      if (result.status === 'rejected') failures.push(`${groupVersions[i]}: ${(result.reason as Error).message}`);
      else for (const r of result.value ?? []) if (r.verbs.includes('list') && r.verbs.includes('delete')) resources.push(r);
    });
    return { resources, failures };
  }

  private async preferredGroupVersions(): Promise<string[]> {
    if (this.preferred && Date.now() - this.preferred.at < TTL_MS) return this.preferred.groupVersions;
    const core = await this.kube.request<{ versions?: string[] }>('GET', '/api');
    const groups = await this.kube.request<{ groups?: { preferredVersion?: { groupVersion: string } }[] }>('GET', '/apis');
    const groupVersions = [
      ...(core.versions ?? []).filter((v) => v === 'v1'),
      ...(groups.groups ?? []).flatMap((g) => (g.preferredVersion ? [g.preferredVersion.groupVersion] : [])),
    ];
    this.preferred = { at: Date.now(), groupVersions };
    return groupVersions;
  }

  private async groupVersion(apiVersion: string, refresh: boolean): Promise<ApiResource[] | null> {
    const cached = this.groupVersions.get(apiVersion);
    const age = cached ? Date.now() - cached.at : Infinity;
    if (cached && (refresh ? age < MISS_REFRESH_MS : age < TTL_MS)) return cached.resources;
    const { group, version } = splitApiVersion(apiVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let resources: ApiResource[] | null;
    try {
      const list = await this.kube.request<ApiResourceList>('GET', path);
      resources = (list.resources ?? [])
        .filter((r) => !r.name.includes('/'))
        .map((r) => ({ group, version, apiVersion, kind: r.kind, plural: r.name, namespaced: r.namespaced, verbs: r.verbs ?? [] }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      resources = null;
    }
    this.groupVersions.set(apiVersion, { at: Date.now(), resources });
    return resources;
  }
}
