import { createLogger } from '@brokkr/logger';
import type { KubeApiServer } from '@brokkr/testkit';
import { Discovery } from '../../src/kube/discovery.ts';
import { KubeObjects } from '../../src/kube/objects.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { LiveChannel } from '../../src/live/channel.ts';
import { agentChannelUrl } from '../../src/live/url.ts';
import { startTelemetry, type LogSource, type LogStreamRequest, type RunningTelemetry } from '../../src/telemetry/index.ts';

/**
 * Container logs for a kubelet-less apiserver (the test seam of the log path): the test says what
 * each `namespace/pod/container` has printed (`<RFC3339Nano> <text>` lines, as the kubelet writes
 * them with timestamps=true). A request gets the lines at or after its `sinceTime` (the kubelet
 * rounds it down to the second), then the stream stays open, like `follow`, until it is aborted.
 */
export class FakeContainerLogs {
  readonly requests: LogStreamRequest[] = [];
  private readonly lines = new Map<string, string[]>();

  print(namespace: string, pod: string, container: string, ...lines: string[]): void {
    const key = `${namespace}/${pod}/${container}`;
    this.lines.set(key, [...(this.lines.get(key) ?? []), ...lines]);
  }

  readonly source: LogSource = (req) => {
    this.requests.push(req);
    const all = this.lines.get(`${req.namespace}/${req.pod}/${req.container}`) ?? [];
    const since = req.sinceTime ? Math.floor(Date.parse(req.sinceTime) / 1000) * 1000 : undefined;
    const lines = since === undefined ? all : all.filter((l) => Date.parse(l.slice(0, l.indexOf(' '))) >= since);
    return (async function* () {
      yield* lines;
      await new Promise<void>((resolve) =>
        req.signal.aborted ? resolve() : req.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    })();
  };
}

/** A kubelet-style line: `<RFC3339Nano> <text>`. */
export const stamped = (at: Date, text: string, nanos = '000001') => `${at.toISOString().replace('Z', '')}${nanos}Z ${text}`;

export interface InProcessTelemetryOptions {
  hubUrl: string;
  agent: { id: string; pak: string };
  kube: KubeApiServer;
  client: KubeClient;
  /** Where the resume cursor lives. */
  stateNamespace: string;
  logSource?: LogSource;
}

/**
 * The agent's telemetry streamers and its own live channel, dialled to the real api, run in the
 * test's process so that a test can stop and restart them (the cursor survives in the cluster) and
 * give them a log source.
 */
export class InProcessTelemetry {
  private readonly logger = createLogger({ service: 'agent-test', level: 'warn' });
  private channel: LiveChannel | undefined;
  private telemetry: RunningTelemetry | undefined;

  constructor(private readonly options: InProcessTelemetryOptions) {}

  async start(): Promise<void> {
    const { hubUrl, agent, kube, client, stateNamespace, logSource } = this.options;
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
      ...(logSource ? { logSource } : {}),
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.telemetry?.stop();
    this.telemetry = undefined;
    await this.channel?.stop();
  }
}
