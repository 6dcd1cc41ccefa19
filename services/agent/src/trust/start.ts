import type { ClusterFacts } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { AgentSettings } from '../config.ts';
import type { KubeClient } from '../kube/client.ts';
import type { AgentMetrics } from '../metrics.ts';
import type { EventReporter } from '../reconcile/event-reporter.ts';
import { TrustGate } from './gate.ts';
import { createTrustMetrics } from './metrics.ts';
import { OwnRenders } from './own-render.ts';
import { loadTrustPolicy } from './policy-source.ts';
import { TrustRelay } from './relay.ts';
import { TrustStateStore } from './state-store.ts';

export interface TrustWiring {
  settings: AgentSettings;
  agentId: string;
  kube: KubeClient;
  events: EventReporter;
  metrics: AgentMetrics;
  logger: Logger;
  /** The agent's own cluster facts (runtime/cluster-facts.ts): what its renders of signed charts are made against. */
  clusterFacts: { latest(): Promise<ClusterFacts | undefined> };
}

/**
 * The trust gate when the installation gives the agent a trust policy (BROKKR__AGENT__TRUST_POLICY_FILE),
 * else none: the agent then works exactly as before. It needs the agent's namespace, where it keeps
 * what it took; without one the agent does not start.
 */
export async function createTrustGate(w: TrustWiring): Promise<TrustGate | undefined> {
  const { settings } = w;
  const policy = await loadTrustPolicy(settings.trust.policyFile);
  if (!policy) return undefined;
  if (!settings.agentNamespace)
    throw new Error('a trust policy needs the agent namespace (BROKKR__AGENT__NAMESPACE), where the agent keeps the versions it took');
  const logger = w.logger.child({ loop: 'trust' });
  const relay = new TrustRelay(settings.brokerUrl, settings.pak, w.agentId);
  // Only an agent requiring signatures renders: one that does not is served the hub's render as before.
  const me = {
    id: w.agentId,
    name: settings.agentName,
    cluster_name: settings.clusterName,
    labels: policy.labels,
    annotations: policy.annotations,
  };
  const facts = () => w.clusterFacts.latest();
  const own = policy.requireSignatures ? new OwnRenders({ relay, binary: settings.trust.rendererBinary, logger, me, facts }) : undefined;
  const gate = await TrustGate.create({
    policy,
    relay,
    ...(own ? { own } : {}),
    store: new TrustStateStore(w.kube, settings.agentNamespace, settings.trust.stateConfigMap),
    events: w.events,
    metrics: createTrustMetrics(w.metrics.registry),
    logger,
    identity: { name: settings.agentName, cluster: settings.clusterName, labels: policy.labels },
    refreshMs: settings.pollingIntervalMs,
  });
  logger.info(
    { requireSignatures: policy.requireSignatures, root: policy.root.version, generators: policy.root.generators.map((g) => g.name) },
    'trust policy in force: the hub’s content is checked before it is applied',
  );
  return gate;
}
