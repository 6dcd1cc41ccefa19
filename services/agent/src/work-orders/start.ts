import type { Logger } from '@brokkr/logger';
import { clusterScope } from '../grants/book.ts';
import type { AgentSettings } from '../config.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { WorkOrderLoop, type WorkOrderLoopDeps } from './loop.ts';

export interface WorkOrderWiring {
  settings: AgentSettings;
  objects: KubeObjects;
  discovery: Discovery;
  metrics: AgentMetrics;
  agentId: string;
  logger: Logger;
  isActive(): boolean;
  /** With a trust policy: checks each order before it runs (src/trust/gate.ts). */
  trust?: WorkOrderLoopDeps['trust'];
}

/** The work-order loop wired to the broker and the cluster, or none when work orders are off (concurrency 0). */
export function createWorkOrderLoop(w: WorkOrderWiring): WorkOrderLoop | undefined {
  const { settings } = w;
  if (settings.workOrderConcurrency <= 0) return undefined;
  const logger = w.logger.child({ loop: 'work-orders' });
  return new WorkOrderLoop({
    brokerUrl: settings.brokerUrl,
    pak: settings.pak,
    agentId: w.agentId,
    concurrency: settings.workOrderConcurrency,
    pollingIntervalMs: settings.pollingIntervalMs,
    longPollWaitSeconds: settings.longPollWaitSeconds,
    // Work orders never prune: an empty inventory makes every object's ownership be read from the cluster.
    apply: {
      objects: w.objects,
      discovery: w.discovery,
      metrics: w.metrics,
      logger,
      agentId: w.agentId,
      watchNamespace: settings.watchNamespace,
      concurrency: settings.concurrency,
      crdEstablishedTimeoutMs: settings.crdEstablishedTimeoutMs,
      inventory: { byStack: new Map(), byKey: new Map(), failures: [] },
      // An admin's order: anywhere but the agent's own namespace (its credentials live there).
      scope: clusterScope(settings.agentNamespace),
    },
    registry: w.metrics.registry,
    logger,
    isActive: w.isActive,
    trust: w.trust,
  });
}
