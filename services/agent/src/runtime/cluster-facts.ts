import type { ClusterFacts } from '@brokkr/contracts';
import type { KubeClient } from '../kube/client.ts';

const REREAD_MS = 10 * 60_000;

interface ApiVersions {
  versions?: string[];
}
interface ApiGroupList {
  groups?: { versions?: { groupVersion: string }[] }[];
}

/**
 * What the agent tells the hub about its cluster with its heartbeat: the Kubernetes version and
 * every API version it serves (a chart's `.Capabilities`). Read again every ten minutes, and sent
 * only until the hub has taken them once after a change: a heartbeat stays small.
 */
export class ClusterFactsReporter {
  private current: ClusterFacts | undefined;
  private readAt = 0;
  private sent: string | undefined;

  constructor(private readonly kube: KubeClient) {}

  /** The facts this heartbeat should carry, or undefined (unchanged since the hub took them, or unreadable now). */
  async due(gitVersion: string | undefined): Promise<ClusterFacts | undefined> {
    if (gitVersion && (!this.current || Date.now() - this.readAt > REREAD_MS || this.current.kubernetes_version !== gitVersion)) {
      this.current = await this.read(gitVersion).catch(() => this.current);
      this.readAt = Date.now();
    }
    return this.current && JSON.stringify(this.current) !== this.sent ? this.current : undefined;
  }

  /**
   * The facts as last read, read now if never: what an agent requiring signatures renders a signed
   * chart against (its `.Capabilities`, `{{ agent.facts.* }}`), its own cluster's, never the hub's
   * record of them. Undefined while the cluster cannot be read.
   */
  async latest(): Promise<ClusterFacts | undefined> {
    if (!this.current) await this.due((await this.kube.version()).gitVersion).catch(() => undefined);
    return this.current;
  }

  /** The hub took these facts. */
  taken(facts: ClusterFacts): void {
    this.sent = JSON.stringify(facts);
  }

  private async read(gitVersion: string): Promise<ClusterFacts> {
    const [core, groups] = await Promise.all([
      this.kube.request<ApiVersions>('GET', '/api', { timeoutMs: 5000 }),
      this.kube.request<ApiGroupList>('GET', '/apis', { timeoutMs: 5000 }),
    ]);
    const apiVersions = [...(core.versions ?? []), ...(groups.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion))];
    return { kubernetes_version: gitVersion, api_versions: [...new Set(apiVersions)].sort() };
  }
}
