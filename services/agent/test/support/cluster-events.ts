import { createLogger } from '@brokkr/logger';
import type { KubeApiServer } from '@brokkr/testkit';
import { Discovery } from '../../src/kube/discovery.ts';
import { KubeObjects } from '../../src/kube/objects.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { BrokerClient } from '../../src/broker/client.ts';
import { GrantBook } from '../../src/grants/book.ts';
import { AgentChannel } from '../../src/agent-channel/channel.ts';
import { agentChannelUrl } from '../../src/agent-channel/url.ts';
import { startClusterEvents, type RunningClusterEvents } from '../../src/cluster-events/index.ts';

export interface InProcessClusterEventsOptions {
  hubUrl: string;
  agent: { id: string; pak: string };
  kube: KubeApiServer;
  client: KubeClient;
  /** Where the resume cursor lives. */
  stateNamespace: string;
}

/**
 * The agent's cluster-event streamers and its own live channel, dialled to the real api, run in the
 * test's process so that a test can stop and restart them (the cursor survives in the cluster).
 */
export class InProcessClusterEvents {
  private readonly logger = createLogger({ service: 'agent-test', level: 'warn' });
  private channel: AgentChannel | undefined;
  private clusterEvents: RunningClusterEvents | undefined;

  constructor(private readonly options: InProcessClusterEventsOptions) {}

  async start(): Promise<void> {
    const { hubUrl, agent, kube, client, stateNamespace } = this.options;
    const channel = new AgentChannel({
      url: agentChannelUrl(hubUrl, undefined),
      pak: agent.pak,
      userAgent: 'brokkr-ts-agent/test',
      forceRest: false,
      logger: this.logger,
    });
    this.channel = channel;
    const up = new Promise<void>((resolve) => channel.on('state', (state: string) => state === 'up' && resolve()));
    channel.start();
    await up;
    this.clusterEvents = await startClusterEvents({
      kube: client,
      objects: new KubeObjects(client),
      discovery: new Discovery(client, 4),
      channel,
      agentId: agent.id,
      kubeconfig: kube.kubeconfigPath,
      watchNamespace: undefined,
      stateNamespace,
      grants: new GrantBook({
        broker: new BrokerClient(hubUrl, agent.pak),
        agentId: agent.id,
        agentNamespace: undefined,
        logger: this.logger,
      }),
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.clusterEvents?.stop();
    this.clusterEvents = undefined;
    await this.channel?.stop();
  }
}
