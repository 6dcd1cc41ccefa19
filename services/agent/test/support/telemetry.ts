import { createLogger } from '@brokkr/logger';
import type { KubeApiServer } from '@brokkr/testkit';
import { Discovery } from '../../src/kube/discovery.ts';
import { KubeObjects } from '../../src/kube/objects.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { LiveChannel } from '../../src/live/channel.ts';
import { agentChannelUrl } from '../../src/live/url.ts';
import { startTelemetry, type RunningTelemetry } from '../../src/telemetry/index.ts';

export interface InProcessTelemetryOptions {
  hubUrl: string;
  agent: { id: string; pak: string };
  kube: KubeApiServer;
  client: KubeClient;
  /** Where the resume cursor lives. */
  stateNamespace: string;
}

/**
 * The agent's telemetry streamers and its own live channel, dialled to the real api, run in the
 * test's process so that a test can stop and restart them (the cursor survives in the cluster).
 */
export class InProcessTelemetry {
  private readonly logger = createLogger({ service: 'agent-test', level: 'warn' });
  private channel: LiveChannel | undefined;
  private telemetry: RunningTelemetry | undefined;

  constructor(private readonly options: InProcessTelemetryOptions) {}

  async start(): Promise<void> {
    const { hubUrl, agent, kube, client, stateNamespace } = this.options;
    const channel = new LiveChannel({
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
    this.telemetry = await startTelemetry({
      kube: client,
      objects: new KubeObjects(client),
      discovery: new Discovery(client, 4),
      live: channel,
      agentId: agent.id,
      kubeconfig: kube.kubeconfigPath,
      watchNamespace: undefined,
      stateNamespace,
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.telemetry?.stop();
    this.telemetry = undefined;
    await this.channel?.stop();
  }
}
