import type { StackRecord } from '@brokkr/trust';
import type { KubeClient } from '../kube/client.ts';
import { KubeApiError } from '../kube/errors.ts';

/**
 * What the agent keeps in its own cluster so that a restart forgets nothing a compromised hub could
 * use: per stack the version applied and the highest taken (rollback protection), the newest trust
 * metadata taken (a root rotation, a revocation list, a timestamp: never replaced by older ones),
 * and the signed work orders run (each runs once). A ConfigMap in the agent's namespace, where no
 * stack may write (the grants keep every stack out of it).
 */
export interface PersistedTrust {
  root: unknown;
  revocations: unknown;
  timestamp: unknown;
  stacks: Record<string, StackRecord>;
  /** Signed work orders run, by nonce: when their signature expires (then the entry goes). */
  workOrders: Record<string, string>;
}

const KEY = 'trust-state.json';

export const emptyTrustState = (): PersistedTrust => ({ root: null, revocations: null, timestamp: null, stacks: {}, workOrders: {} });

interface ConfigMap {
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

export class TrustStateStore {
  private resourceVersion: string | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  private get path(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps/${encodeURIComponent(this.name)}`;
  }

  async load(): Promise<PersistedTrust> {
    let map: ConfigMap;
    try {
      map = await this.kube.request<ConfigMap>('GET', this.path);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return emptyTrustState();
      throw err;
    }
    this.resourceVersion = map.metadata.resourceVersion;
    const text = map.data?.[KEY];
    return text ? { ...emptyTrustState(), ...(JSON.parse(text) as Partial<PersistedTrust>) } : emptyTrustState();
  }

  /** Writes the whole state; a concurrent writer (a second agent on the same map) makes it fail rather than lose an update. */
  async save(state: PersistedTrust): Promise<void> {
    const body: ConfigMap = {
      metadata: {
        name: this.name,
        namespace: this.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'brokkr-agent' },
        ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}),
      },
      data: { [KEY]: JSON.stringify(state) },
    };
    const written = this.resourceVersion ? await this.kube.request<ConfigMap>('PUT', this.path, { body }) : await this.create(body);
    this.resourceVersion = written.metadata.resourceVersion;
  }

  /** The first write; when the map exists after all (made since it was read), overwritten from its current version. */
  private async create(body: ConfigMap): Promise<ConfigMap> {
    try {
      return await this.kube.request<ConfigMap>('POST', `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`, { body });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
      const current = await this.kube.request<ConfigMap>('GET', this.path);
      return this.kube.request<ConfigMap>('PUT', this.path, {
        body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion } },
      });
    }
  }
}
