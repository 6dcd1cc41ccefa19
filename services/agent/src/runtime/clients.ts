import type { Logger } from '@brokkr/logger';
import { GrantBook } from '../grants/book.ts';
import { ScheduleStore } from '../maintenance/schedule-store.ts';
import type { AgentRecord } from '../broker/types.ts';
import type { AgentSettings } from '../config.ts';
import type { KubeClient } from '../kube/client.ts';
import { Discovery } from '../kube/discovery.ts';
import { KubeObjects } from '../kube/objects.ts';
import { ChannelBrokerClient } from '../agent-channel/channel-broker.ts';
import { AgentChannel } from '../agent-channel/channel.ts';
import { agentChannelUrl } from '../agent-channel/url.ts';
import { createAgentMetrics, type AgentMetrics } from '../metrics.ts';
import { EventReporter } from '../reconcile/event-reporter.ts';
import { createTrustGate } from '../trust/start.ts';
import { ClusterFactsReporter } from './cluster-facts.ts';
import type { TrustGate } from '../trust/gate.ts';
import { connectKubernetes, identify, waitForBroker } from './startup.ts';
import { AGENT_VERSION } from './version.ts';

/** The agent's identity and the clients its loops share, made once at start-up. */
export interface AgentClients {
  settings: AgentSettings;
  agent: AgentRecord;
  /** The agent's logger (carries its id). */
  log: Logger;
  broker: ChannelBrokerClient;
  /** The agent channel (WebSocket to the broker); the broker client sends over it while it is up. */
  channel: AgentChannel;
  kube: KubeClient;
  objects: KubeObjects;
  discovery: Discovery;
  metrics: AgentMetrics;
  events: EventReporter;
  /** What each generator may place on this cluster; the target watcher keeps it current. */
  grants: GrantBook;
  /** With a trust policy: what the hub sends is checked before the reconciler or a work order sees it (src/trust/). */
  trust: TrustGate | undefined;
  /** The cluster's facts: reported with heartbeats, and what the trust gate renders signed charts against. */
  clusterFacts: ClusterFactsReporter;
}

/** Start-up: the broker ready, the PAK verified, the agent record found, Kubernetes reachable. */
export async function connectClients(settings: AgentSettings, logger: Logger): Promise<AgentClients> {
  const broker = new ChannelBrokerClient(settings.brokerUrl, settings.pak);
  await waitForBroker(broker, settings.brokerReadyAttempts, logger);
  const agent = await identify(broker, settings.agentName, settings.clusterName);
  const { kube, version } = await connectKubernetes(settings.kubeconfig, settings.concurrency * 2);
  const log = logger.child({ agentId: agent.id });
  log.info(
    {
      kubernetes: version,
      server: kube.server,
      status: agent.status,
      watchNamespace: settings.watchNamespace,
      agentNamespace: settings.agentNamespace,
    },
    'agent identified',
  );
  const metrics = createAgentMetrics();
  const channel = createAgentChannel(settings, log);
  broker.attach(channel);
  const events = new EventReporter(broker, agent.id, metrics, log);
  events.seed(await broker.listEvents(agent.id).catch((err: unknown) => (log.warn({ err }, 'could not read past events'), [])));
  const objects = new KubeObjects(kube);
  const discovery = new Discovery(kube, settings.concurrency);
  const kept = await ScheduleStore.load(kube, settings.agentNamespace, agent.id, log);
  const grants = new GrantBook({
    ...{ broker, agentId: agent.id, agentNamespace: settings.agentNamespace, logger: log },
    keptSchedule: kept?.loaded,
    keepSchedule: (schedule) => void kept?.save(schedule),
  });
  if (!settings.agentNamespace) log.warn('no agent namespace known (BROKKR__AGENT__NAMESPACE): nothing protects one from stacks');
  const clusterFacts = new ClusterFactsReporter(kube);
  const trust = await createTrustGate({ settings, agentId: agent.id, kube, events, metrics, logger: log, clusterFacts });
  return { settings, agent, log, broker, channel, kube, objects, discovery, metrics, events, grants, trust, clusterFacts };
}

/** Hints wake the loops; heartbeats, events and health go up it while it is up (REST otherwise). Started last. */
function createAgentChannel(settings: AgentSettings, log: Logger): AgentChannel {
  return new AgentChannel({
    url: agentChannelUrl(settings.brokerUrl, settings.channel.url),
    pak: settings.pak,
    userAgent: `brokkr-ts-agent/${AGENT_VERSION}`,
    forceRest: settings.channel.forceRest,
    // With a trust policy (the trust gate, src/trust/): signatures in the patches, trust-metadata notices.
    checksSignatures: settings.trust.policyFile !== undefined,
    logger: log.child({ loop: 'channel' }),
  });
}
