import { performance } from 'node:perf_hooks';
import type { Logger } from '@brokkr/logger';
import type { BrokerClient } from '../broker/client.ts';
import type { AgentRecord } from '../broker/types.ts';
import type { KubeClient } from '../kube/client.ts';
import type { AgentMetrics } from '../metrics.ts';
import { sleep } from '../util/async.ts';
import type { ClusterFactsReporter } from './cluster-facts.ts';

export interface HeartbeatDeps {
  broker: BrokerClient;
  kube: KubeClient;
  metrics: AgentMetrics;
  logger: Logger;
  intervalMs: number;
  /** Called after each beat (events waiting for the broker go out with it). */
  afterBeat?: () => Promise<void>;
  /** What the cluster is (sent with a beat when it changed); shared with the trust gate's own renders. */
  facts: ClusterFactsReporter;
}

/**
 * Every polling interval: time a Kubernetes /version probe, send the heartbeat with the result,
 * and re-read the agent record, whose status gates everything but the heartbeat itself.
 */
export class Heartbeat {
  brokerConnected = true;
  k8sReachable = true;
  lastHeartbeatAt: Date | undefined;
  private readonly statusListeners: ((agent: AgentRecord) => void)[] = [];

  constructor(
    private readonly deps: HeartbeatDeps,
    public agent: AgentRecord,
  ) {}

  get active(): boolean {
    return this.agent.status === 'ACTIVE';
  }

  /** `listener` hears of every status change (e.g. an admin set the agent ACTIVE). */
  onStatusChange(listener: (agent: AgentRecord) => void): void {
    this.statusListeners.push(listener);
  }

  /** Takes a fresh agent record (from here or elsewhere) and reports a status change. */
  update(agent: AgentRecord): void {
    const before = this.agent.status;
    this.agent = agent;
    if (agent.status !== before) {
      this.deps.logger.info({ from: before, to: agent.status }, 'agent status changed');
      for (const listener of this.statusListeners) listener(agent);
    }
  }

  async refresh(): Promise<AgentRecord> {
    const agent = await this.deps.broker.findAgent(this.agent.name, this.agent.cluster_name);
    this.update(agent);
    return agent;
  }

  async beat(): Promise<void> {
    const started = performance.now();
    let latencyMs: number | null = null;
    let gitVersion: string | undefined;
    try {
      gitVersion = (await this.deps.kube.version()).gitVersion;
      latencyMs = Math.round(performance.now() - started);
      this.k8sReachable = true;
      this.deps.metrics.k8sLatency.set(latencyMs / 1000);
    } catch (err) {
      this.k8sReachable = false;
      this.deps.logger.warn({ err }, 'Kubernetes API unreachable');
    }
    const facts = await this.deps.facts.due(gitVersion);
    try {
      await this.deps.broker.heartbeat(this.agent.id, {
        k8s_reachable: this.k8sReachable,
        k8s_api_latency_ms: latencyMs,
        ...(facts ? { facts } : {}),
      });
      if (facts) this.deps.facts.taken(facts);
      this.brokerConnected = true;
      this.lastHeartbeatAt = new Date();
      this.deps.metrics.heartbeats.inc({ status: 'success' });
      this.deps.metrics.lastHeartbeat.set(Date.now() / 1000);
      await this.refresh();
    } catch (err) {
      this.brokerConnected = false;
      this.deps.metrics.heartbeats.inc({ status: 'error' });
      this.deps.logger.warn({ err }, 'heartbeat failed');
    }
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.beat();
      await this.deps.afterBeat?.().catch(() => undefined);
      await sleep(this.deps.intervalMs, signal);
    }
  }
}
